/*
 * Entry points of the guest kernel: start of day, the hypercall page, and the stubs Xen
 * bounces exceptions, events and system calls to.
 *
 * Xen builds every bounce frame on the guest kernel stack as
 *     { RCX, R11, [ERRCODE,] RIP, CS, RFLAGS, RSP, SS }      (16-byte aligned)
 * (the failsafe callback adds DS, ES, FS, GS after R11). The stubs put RCX/R11 back into
 * the registers they came from and build a TrapFrame (arch/trap_frame.h) so that all
 * registers of the interrupted context are visible to C++ and restored on return.
 */
#define HYPERCALL_IRET     23
#define VECTOR_EVENT       256
#define VECTOR_SYSCALL     257
#define VECTOR_FAILSAFE    258
#define VECTOR_SYSENTER    259

    .section .text.entry, "ax"
    .globl _start
_start:
    /* rsi = start_info (virtual), rsp = Xen's bootstrap stack at the end of the initial
     * mappings. Keep Xen's rsp: it tells where the initial bootstrap region ends. */
    mov   %rsp, %rdx
    lea   boot_stack_top(%rip), %rsp
    mov   %rsi, %rdi
    mov   %rdx, %rsi
    call  kernel_main
1:  jmp   1b

    .section .text.hypercall_page, "ax"
    .balign 4096
    .globl hypercall_page
hypercall_page:
    /* Filled by the domain builder: 128 stubs of 32 bytes, number N at offset N*32. */
    .fill 4096, 1, 0xcc

    .text
.macro TRAP_NO_ERROR name, vector
    .globl \name
\name:
    pop   %rcx
    pop   %r11
    push  $0
    push  $\vector
    jmp   trap_common
.endm

.macro TRAP_WITH_ERROR name, vector
    .globl \name
\name:
    pop   %rcx
    pop   %r11
    push  $\vector
    jmp   trap_common
.endm

TRAP_NO_ERROR   trap_divide_error,        0
TRAP_NO_ERROR   trap_debug,               1
TRAP_NO_ERROR   trap_int3,                3
TRAP_NO_ERROR   trap_overflow,            4
TRAP_NO_ERROR   trap_bounds,              5
TRAP_NO_ERROR   trap_invalid_op,          6
TRAP_NO_ERROR   trap_device_not_available, 7
TRAP_NO_ERROR   trap_coprocessor_segment, 9
TRAP_WITH_ERROR trap_invalid_tss,         10
TRAP_WITH_ERROR trap_segment_not_present, 11
TRAP_WITH_ERROR trap_stack_segment,       12
TRAP_WITH_ERROR trap_general_protection,  13
TRAP_WITH_ERROR trap_page_fault,          14
TRAP_NO_ERROR   trap_coprocessor_error,   16
TRAP_WITH_ERROR trap_alignment_check,     17
TRAP_NO_ERROR   trap_machine_check,       18
TRAP_NO_ERROR   trap_simd_error,          19
TRAP_NO_ERROR   event_callback_entry,     VECTOR_EVENT
TRAP_NO_ERROR   syscall_callback_entry,   VECTOR_SYSCALL
/* selftest=swint's software interrupts and sysenter callback (kernel/process/software_interrupts.h) */
TRAP_NO_ERROR   trap_software_0x20,       0x20
TRAP_NO_ERROR   trap_software_0x22,       0x22
TRAP_NO_ERROR   trap_software_0x80,       0x80
TRAP_NO_ERROR   trap_software_0x81,       0x81
TRAP_NO_ERROR   trap_software_0x90,       0x90
TRAP_NO_ERROR   trap_software_0x91,       0x91
TRAP_NO_ERROR   sysenter_callback_entry,  VECTOR_SYSENTER

    /* Xen could not load the saved segment registers: drop them (null selectors are fine
     * for a 64-bit flat guest) and let C++ report it. */
    .globl failsafe_callback_entry
failsafe_callback_entry:
    pop   %rcx
    pop   %r11
    add   $32, %rsp
    push  $0
    push  $VECTOR_FAILSAFE
    jmp   trap_common

trap_common:
    cld                          /* C++ code needs DF clear; the interrupted context may have set it */
    push  %rax
    push  %rbx
    push  %rcx
    push  %rdx
    push  %rsi
    push  %rdi
    push  %rbp
    push  %r8
    push  %r9
    push  %r10
    push  %r11
    push  %r12
    push  %r13
    push  %r14
    push  %r15
    mov   %rsp, %rdi
    mov   %rsp, %rbx
    and   $-16, %rsp
    call  trap_dispatch
    mov   %rbx, %rsp
restore_frame:
    pop   %r15
    pop   %r14
    pop   %r13
    pop   %r12
    pop   %r11
    pop   %r10
    pop   %r9
    pop   %r8
    pop   %rbp
    pop   %rdi
    pop   %rsi
    pop   %rdx
    pop   %rcx
    pop   %rbx
    pop   %rax
    add   $16, %rsp              /* vector, error code */
    /* HYPERVISOR_iret: the stub pushes RCX, R11, RAX itself; we supply flags = 0 so
     * RCX and R11 are restored exactly (not the sysret shortcut). */
    push  $0
    jmp   hypercall_page + HYPERCALL_IRET * 32

    /* A secondary vCPU (kernel/smp): it starts here with its own stack in rsp and its id in
     * rdi (the context VCPUOP_initialise gave it), and takes its events through the stub
     * below, whose dispatcher handles nothing but events (no batched page-table flush, no
     * trace poll: those belong to vCPU 0's kernel). Exceptions take the kernel's stubs. */
    .globl secondary_vcpu_entry
secondary_vcpu_entry:
    call  secondary_vcpu_main
1:  jmp   1b

    .globl secondary_event_callback_entry
secondary_event_callback_entry:
    pop   %rcx
    pop   %r11
    push  $0
    push  $VECTOR_EVENT
    cld
    push  %rax
    push  %rbx
    push  %rcx
    push  %rdx
    push  %rsi
    push  %rdi
    push  %rbp
    push  %r8
    push  %r9
    push  %r10
    push  %r11
    push  %r12
    push  %r13
    push  %r14
    push  %r15
    mov   %rsp, %rdi
    mov   %rsp, %rbx
    and   $-16, %rsp
    call  secondary_trap_dispatch
    mov   %rbx, %rsp
    jmp   restore_frame

    /* [[noreturn]] void resume_frame(TrapFrame*): returns to the context in the frame
     * (used to enter user mode for the first time). */
    .globl resume_frame
resume_frame:
    mov   %rdi, %rsp
    jmp   restore_frame

    .bss
    .balign 16
boot_stack:
    .skip 65536
boot_stack_top:

    .section .note.GNU-stack, "", @progbits
