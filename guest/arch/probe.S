/*
 * Stores (and a load) that are allowed to fault. The page-fault path in kernel mode asks
 * kernel::probe_fixup() whether the faulting rip is one of the labelled instructions below;
 * if so it resumes at the matching fixup, which returns 1 instead of 0. Used by the
 * self-tests that check what the hypervisor does with page-table writes it must refuse.
 */
        .text
        .global probe_store64, probe_store64_insn, probe_store64_fixup
/* long probe_store64(volatile uint64_t* address, uint64_t value) */
probe_store64:
probe_store64_insn:
        mov     %rsi, (%rdi)
        xor     %eax, %eax
        ret
probe_store64_fixup:
        mov     $1, %eax
        ret

        .global probe_rep_stosq, probe_rep_stosq_insn, probe_rep_stosq_fixup
/* long probe_rep_stosq(volatile uint64_t* address, uint64_t value, uint64_t count) */
probe_rep_stosq:
        mov     %rsi, %rax
        mov     %rdx, %rcx
probe_rep_stosq_insn:
        rep stosq
        xor     %eax, %eax
        ret
probe_rep_stosq_fixup:
        mov     $1, %eax
        ret

        .global probe_movnti, probe_movnti_insn, probe_movnti_fixup
/* long probe_movnti(volatile uint64_t* address, uint64_t value): a non-temporal store */
probe_movnti:
probe_movnti_insn:
        movnti  %rsi, (%rdi)
        xor     %eax, %eax
        ret
probe_movnti_fixup:
        mov     $1, %eax
        ret
        .global probe_load64, probe_load64_insn, probe_load64_fixup
/* long probe_load64(const volatile uint64_t* address, uint64_t* value): a load that may fault
 * (reads through mappings a test expects the hypervisor to have refused) */
probe_load64:
probe_load64_insn:
        mov     (%rdi), %rax
        mov     %rax, (%rsi)
        xor     %eax, %eax
        ret
probe_load64_fixup:
        mov     $1, %eax
        ret
        .section .note.GNU-stack, "", @progbits
