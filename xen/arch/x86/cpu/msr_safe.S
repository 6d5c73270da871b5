/*
 * rdmsr of an MSR the CPU may not have (Xen's rdmsr_safe), for the MSRs a PV guest reads
 * through the hypervisor (pv/rules/msr_emulation): the #GP of a missing MSR resumes at the fixup,
 * through the same fixup table as the guest accesses (domain/guest_access.S).
 */
        .text
        .global msr_read_safe
/* uint64_t msr_read_safe(uint32_t msr [edi], uint64_t* value [rsi]): 0 read, 1 no such MSR */
msr_read_safe:
        mov     %edi, %ecx
1:      rdmsr
        shl     $32, %rdx
        or      %rdx, %rax
        mov     %rax, (%rsi)
        xor     %eax, %eax
        ret
2:      mov     $1, %eax
        ret

        .pushsection .guest_access_fixups, "a"
        .balign 8
        .quad 1b, 2b
        .popsection

        .section .note.GNU-stack, "", @progbits
