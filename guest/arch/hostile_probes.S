/*
 * Probes for the hostile-guest self-tests (arch/hostile_probes.h): hypercalls made with
 * state a well-behaved kernel never has (RFLAGS.NT set, a whole 64-bit rax), returns through
 * HYPERVISOR_iret with frames the CPU refuses, and an exception taken on a chosen stack.
 */
#define HYPERCALL_IRET 23

        .text
/* long hypercall_with_nt(unsigned number, uint64_t a1, uint64_t a2): the hypercall, made
 * with RFLAGS.NT set (cleared again afterwards). */
        .global hypercall_with_nt
hypercall_with_nt:
        pushfq
        orq     $0x4000, (%rsp)
        popfq
        mov     %edi, %eax
        shl     $5, %rax
        lea     hypercall_page(%rip), %rcx
        add     %rax, %rcx
        mov     %rsi, %rdi
        mov     %rdx, %rsi
        call    *%rcx
        pushfq
        andq    $~0x4000, (%rsp)
        popfq
        ret

/* long hypercall_raw(uint64_t rax, uint64_t a1, uint64_t a2, uint64_t a3): a syscall with
 * the whole of rax as the hypercall number (the hypercall page only sets eax). */
        .global hypercall_raw
hypercall_raw:
        mov     %rdi, %rax
        mov     %rsi, %rdi
        mov     %rdx, %rsi
        mov     %rcx, %rdx
        syscall
        ret

/* long probe_iret_on(uint64_t stack, const uint64_t context[6]): HYPERVISOR_iret on `stack`
 * to context = {rip, cs, rflags, rsp, ss, rax}. A return that works should land at
 * probe_iret_landing (the caller puts it in rip): -1. A return the CPU refuses raises an
 * exception the trap handler reports through hostile_probe_fixup, which resumes at
 * probe_iret_fixup with (vector << 16 | error code) in rax. */
        .global probe_iret_on, probe_iret_landing, probe_iret_fixup
probe_iret_on:
        push    %rbx
        push    %rbp
        push    %r12
        push    %r13
        push    %r14
        push    %r15
        mov     %rsp, probe_iret_saved_rsp(%rip)
        mov     %rdi, %rsp
        pushq   32(%rsi)                /* ss */
        pushq   24(%rsi)                /* rsp */
        pushq   16(%rsi)                /* rflags */
        pushq   8(%rsi)                 /* cs */
        pushq   0(%rsi)                 /* rip */
        pushq   $0                      /* flags: rcx and r11 come from the context */
        mov     40(%rsi), %rax
        movb    $1, probe_iret_armed(%rip)
        jmp     hypercall_page + HYPERCALL_IRET * 32
probe_iret_landing:
        mov     $-1, %rax
probe_iret_fixup:
        movb    $0, probe_iret_armed(%rip)
        mov     probe_iret_saved_rsp(%rip), %rsp
        pop     %r15
        pop     %r14
        pop     %r13
        pop     %r12
        pop     %rbp
        pop     %rbx
        ret

/* long probe_int3_on(uint64_t stack): an int3 taken with rsp = stack, so the hypervisor
 * writes the bounce frame there; 0 once the handler returned. */
        .global probe_int3_on, probe_int3_resume
probe_int3_on:
        push    %rbp
        mov     %rsp, %rbp
        mov     %rdi, %rsp
        int3
probe_int3_resume:
        mov     %rbp, %rsp
        pop     %rbp
        xor     %eax, %eax
        ret

/* long probe_wrmsr(uint32_t msr [edi], uint64_t value [rsi]): a raw wrmsr, as Linux's
 * startup_xen does one; 0 if it completed, else (vector << 16 | error code) of the exception
 * (the trap handler resumes at probe_msr_fixup through hostile_probe_fixup).
 * long probe_rdmsr(uint32_t msr [edi], uint64_t* value [rsi]): a raw rdmsr into *value. */
        .global probe_wrmsr, probe_rdmsr, probe_wrmsr_insn, probe_rdmsr_insn, probe_msr_fixup
probe_wrmsr:
        mov     %edi, %ecx
        mov     %esi, %eax
        mov     %rsi, %rdx
        shr     $32, %rdx
probe_wrmsr_insn:
        wrmsr
        xor     %eax, %eax
        ret
probe_rdmsr:
        mov     %edi, %ecx
        mov     %rsi, %r8
probe_rdmsr_insn:
        rdmsr
        shl     $32, %rdx
        mov     %eax, %eax
        or      %rdx, %rax
        mov     %rax, (%r8)
        xor     %eax, %eax
        ret
/* long probe_cli(void), probe_sti(void): 0 if the instruction completed (with the vCPU's
 * event mask untouched), else (vector << 16 | error code), through probe_msr_fixup. */
        .global probe_cli, probe_sti, probe_cli_insn, probe_sti_insn
probe_cli:
        xor     %eax, %eax
probe_cli_insn:
        cli
        ret
probe_sti:
        xor     %eax, %eax
probe_sti_insn:
        sti
        ret
/* long probe_wbinvd(void): 0 if wbinvd completed, else (vector << 16 | error code). */
        .global probe_wbinvd, probe_wbinvd_insn
probe_wbinvd:
        xor     %eax, %eax
probe_wbinvd_insn:
        wbinvd
        ret
/* long probe_int_0x80(void), _0x81, _0x90, _0x91: `int $n` from the kernel; the handler's
 * kSoftwareInterruptDelivered if it was delivered, else (vector << 16 | error code) through
 * probe_msr_fixup (selftest=swint). */
        .global probe_int_0x80, probe_int_0x81, probe_int_0x90, probe_int_0x91
        .global probe_int_insn0, probe_int_insn1, probe_int_insn2, probe_int_insn3
probe_int_0x80:
        xor     %eax, %eax
probe_int_insn0:
        int     $0x80
        ret
probe_int_0x81:
        xor     %eax, %eax
probe_int_insn1:
        int     $0x81
        ret
probe_int_0x90:
        xor     %eax, %eax
probe_int_insn2:
        int     $0x90
        ret
probe_int_0x91:
        xor     %eax, %eax
probe_int_insn3:
        int     $0x91
        ret
probe_msr_fixup:                        /* rax = vector << 16 | error code */
        ret
/* long probe_read_cr(unsigned cr [edi], uint64_t* value [rsi]) for CR0, CR3, CR4 and
 * long probe_write_cr(unsigned cr [edi], uint64_t value [rsi]) for CR0, CR4: raw mov from / to
 * a control register; 0, else (vector << 16 | error code) through probe_msr_fixup. */
        .global probe_read_cr, probe_write_cr, probe_cr_insn0, probe_cr_insn1, probe_cr_insn2
        .global probe_cr_insn3, probe_cr_insn4
probe_read_cr:
        xor     %eax, %eax
        cmp     $3, %edi
        je      1f
        cmp     $4, %edi
        je      2f
probe_cr_insn0:
        mov     %cr0, %rdx
        mov     %rdx, (%rsi)
        ret
1:
probe_cr_insn1:
        mov     %cr3, %rdx
        mov     %rdx, (%rsi)
        ret
2:
probe_cr_insn2:
        mov     %cr4, %rdx
        mov     %rdx, (%rsi)
        ret
probe_write_cr:
        xor     %eax, %eax
        cmp     $4, %edi
        je      1f
probe_cr_insn3:
        mov     %rsi, %cr0
        ret
1:
probe_cr_insn4:
        mov     %rsi, %cr4
        ret
/* long probe_forced_cpuid(uint32_t leaf [edi], uint32_t subleaf [esi], uint32_t out[4] [rdx]):
 * Xen's forced-emulation CPUID (ud2; .ascii "xen"; cpuid), as Linux's xen_cpuid does it; 0
 * with eax..edx in out[], else (vector << 16 | error code) through probe_msr_fixup.
 * long probe_forced_not_cpuid(void): the prefix before something other than cpuid, which
 * must stay an invalid opcode. */
        .global probe_forced_cpuid, probe_forced_insn, probe_forced_not_cpuid, probe_forced_bad_insn
probe_forced_cpuid:
        push    %rbx
        push    %rdx
        mov     %edi, %eax
        mov     %esi, %ecx
probe_forced_insn:
        ud2
        .ascii  "xen"
        cpuid
        pop     %rdi
        mov     %eax, 0(%rdi)
        mov     %ebx, 4(%rdi)
        mov     %ecx, 8(%rdi)
        mov     %edx, 12(%rdi)
        pop     %rbx
        xor     %eax, %eax
        ret
probe_forced_cpuid_fixup:               /* rax = vector << 16 | error code */
        pop     %rdi
        pop     %rbx
        ret
probe_forced_not_cpuid:
        xor     %eax, %eax
probe_forced_bad_insn:
        ud2
        .ascii  "xen"
        nop
        nop
        ret
        .global probe_forced_cpuid_fixup

        .data
        .global probe_iret_armed, probe_iret_saved_rsp
probe_iret_armed:
        .byte   0
        .balign 8
probe_iret_saved_rsp:
        .quad   0

        .section .note.GNU-stack, "", @progbits
