/*
 * Entry stubs. Each builds a TrapFrame (see cpu/trap_frame.h) and calls its C++ side
 * (trap_dispatch; the syscall entries their own), whose return path restores the frame with
 * iretq: the C++ side changes the frame to redirect a guest (bounce frames, hypercall results,
 * context switches).
 */
#include "arch/x86/layout.h"
#define __ASSEMBLY__ 1  /* the Xen header then gives only its constants */
#include <xen/arch-x86/xen-x86_64.h>

#define TRAP_FRAME_BYTES (22 * 8)  /* sizeof(TrapFrame), checked there */

        .text
.macro  ENTRY_NO_ERROR vector
        .align 16
        push    $0
        push    $\vector
        jmp     common_entry
.endm
.macro  ENTRY_ERROR vector
        .align 16
        push    $\vector
        jmp     common_entry
.endm

        .align 16
        .global exception_stubs
exception_stubs:                        /* 256 stubs, 16 bytes apart */
        .irp v, 0,1,2,3,4,5,6,7
        ENTRY_NO_ERROR \v
        .endr
        ENTRY_ERROR 8
        ENTRY_NO_ERROR 9
        .irp v, 10,11,12,13,14
        ENTRY_ERROR \v
        .endr
        ENTRY_NO_ERROR 15
        ENTRY_NO_ERROR 16
        ENTRY_ERROR 17
        .irp v, 18,19,20
        ENTRY_NO_ERROR \v
        .endr
        ENTRY_ERROR 21
        .irp v, 22,23,24,25,26,27,28
        ENTRY_NO_ERROR \v
        .endr
        ENTRY_ERROR 29
        ENTRY_ERROR 30
        ENTRY_NO_ERROR 31
        .set v, 32
        .rept 224
        ENTRY_NO_ERROR v
        .set v, v + 1
        .endr

/* The general registers of a TrapFrame, below the vector, error code and hardware frame. */
.macro  SAVE_REGISTERS
        push    %rax
        push    %r8
        push    %r10
        push    %rdx
        push    %rsi
        push    %rdi
        push    %rbx
        push    %rcx
        push    %rbp
        push    %r9
        push    %r11
        push    %r12
        push    %r13
        push    %r14
        push    %r15
        cld
.endm

common_entry:
        SAVE_REGISTERS
        mov     %rsp, %rdi
        call    trap_dispatch
        .global return_from_trap
return_from_trap:
        pop     %r15
        pop     %r14
        pop     %r13
        pop     %r12
        pop     %r11
        pop     %r9
        pop     %rbp
        pop     %rcx
        pop     %rbx
        pop     %rdi
        pop     %rsi
        pop     %rdx
        pop     %r10
        pop     %r8
        pop     %rax
        add     $16, %rsp
        /* The frame may be a guest's, and the guest chose its selectors and rip (through
         * HYPERVISOR_iret): a fault here is the guest's, handled as Xen does (see
         * pv::exit_fault), never the machine's. */
        .global exit_iretq
exit_iretq:
        iretq

/*
 * #DB (vector 1; its slot among the stubs above is unused) arrives on a stack of its own (IST),
 * wherever it was raised. Each CPU's IST stacks keep the top of its entry stack in the word
 * above the IST frame (cpu_tables::load_stacks), so the stub finds it from rsp alone, on any
 * CPU and without GS. In hypervisor context (a guest's data breakpoint on guest memory the
 * hypervisor touched, or a #DB a `mov %ss` delayed into the first instruction of an entry,
 * possibly on the guest's rsp) it is handled there and returns to where it came from. From a
 * guest it continues on the entry stack, where every other entry from a guest lands (the
 * scheduler and the return path expect the guest frame at its top), before anything can
 * touch guest memory and raise another #DB onto the same IST stack.
 */
        .align 16
        .global debug_entry
debug_entry:
        push    $0
        push    $1
        testb   $3, 24(%rsp)            /* the interrupted CS */
        jz      common_entry
        SAVE_REGISTERS
        mov     %rsp, %rsi
        mov     TRAP_FRAME_BYTES(%rsp), %rdi    /* this CPU's entry stack top, right above the IST frame */
        sub     $TRAP_FRAME_BYTES, %rdi
        mov     %rdi, %rsp
        mov     $TRAP_FRAME_BYTES / 8, %ecx
        rep movsq
        mov     %rsp, %rdi
        call    trap_dispatch
        jmp     return_from_trap

/*
 * The guest kernel's `syscall` (a hypercall) and a guest user's `syscall` (to be bounced to the
 * guest kernel) arrive here with the guest's rsp, rcx = rip, r11 = rflags. SFMASK has cleared
 * IF, DF, TF, NT, AC, RF and VM, so nothing here runs with a flag the guest chose. The first
 * two instructions still run on the guest's rsp: only NMI, machine check and a delayed #DB
 * could interrupt them, and all have stacks of their own (IST).
 *
 * Per CPU without GS: every CPU has its own copy of each entry (LSTAR and CSTAR point at its
 * own), which reaches its own line of cpu_entry_data rip-relative. A guest owns GS_BASE while
 * it runs and nothing here swaps it, so no entry (IST ones included) ever has to guess whose
 * GS base is loaded; and CPU 0's copy is the same instructions the single-CPU entry was.
 */
.macro  SYSCALL_ENTRY name, cpu, code_selector, stack_selector, handler
        .global \name
\name:
        mov     %rsp, cpu_entry_data + \cpu * CPU_ENTRY_BYTES + CPU_ENTRY_SCRATCH_RSP(%rip)
        mov     cpu_entry_data + \cpu * CPU_ENTRY_BYTES + CPU_ENTRY_STACK_TOP(%rip), %rsp
        push    $\stack_selector
        push    cpu_entry_data + \cpu * CPU_ENTRY_BYTES + CPU_ENTRY_SCRATCH_RSP(%rip)
        push    %r11                    /* rflags */
        push    $\code_selector
        push    %rcx                    /* rip */
        push    $0
        push    $0x100
        SAVE_REGISTERS
        mov     %rsp, %rdi
        call    \handler
        jmp     return_from_trap
.endm

/* LSTAR: from 64-bit code (the guest kernel's hypercalls, its user mode's system calls).
 * CSTAR: from compatibility-mode code (a 32-bit user process); its frame says so, so the
 * return goes back to 32-bit code. CPU 0's keep the single-CPU names. */
        SYSCALL_ENTRY syscall_entry, 0, FLAT_RING3_CS64, FLAT_RING3_SS64, guest_syscall
        SYSCALL_ENTRY syscall_compat_entry, 0, FLAT_RING3_CS32, FLAT_RING3_SS32, guest_syscall_compat
#if MAX_CPUS != 8
#error "one pair of syscall entries per CPU below"
#endif
        .irp cpu, 1,2,3,4,5,6,7
        SYSCALL_ENTRY syscall_entry_cpu\cpu, \cpu, FLAT_RING3_CS64, FLAT_RING3_SS64, guest_syscall
        SYSCALL_ENTRY syscall_compat_entry_cpu\cpu, \cpu, FLAT_RING3_CS32, FLAT_RING3_SS32, guest_syscall_compat
        .endr

        .section .rodata
        .align 8
        .global syscall_entries, syscall_compat_entries  /* indexed by CPU: its LSTAR, its CSTAR */
syscall_entries:
        .quad syscall_entry
        .irp cpu, 1,2,3,4,5,6,7
        .quad syscall_entry_cpu\cpu
        .endr
syscall_compat_entries:
        .quad syscall_compat_entry
        .irp cpu, 1,2,3,4,5,6,7
        .quad syscall_compat_entry_cpu\cpu
        .endr

        .data
        .align CPU_ENTRY_BYTES
        .global cpu_entry_data, syscall_scratch_rsp, hypervisor_stack_top
cpu_entry_data:
        .fill MAX_CPUS * CPU_ENTRY_BYTES, 1, 0
/* CPU 0's words: selftest=syscall-entry-debug watches its scratch slot; entering the first
 * guest copies its frame to its stack top. */
        .set syscall_scratch_rsp, cpu_entry_data + CPU_ENTRY_SCRATCH_RSP
        .set hypervisor_stack_top, cpu_entry_data + CPU_ENTRY_STACK_TOP
