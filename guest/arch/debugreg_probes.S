/*
 * Raw mov from / to the debug registers for selftest=debugreg (kernel/hostile_probes.h):
 *   long probe_read_dr(unsigned dr [edi], uint64_t* value [rsi]);
 *   long probe_write_dr(unsigned dr [edi], uint64_t value [rsi]);
 * dr 0-7 are DR0-DR7 and 8 is DR8 (REX.R, which does not exist). 0 if the move completed,
 * else (vector << 16 | error code) of its fault: the trap handler sends any fault inside
 * [probe_dr_moves, probe_dr_moves_end) to probe_dr_fixup with rax set.
 * Each move is a 16-byte slot of a table the probe jumps into.
 */
        .text
        .global probe_read_dr, probe_write_dr, probe_dr_moves, probe_dr_moves_end, probe_dr_fixup
probe_read_dr:
        lea     probe_dr_reads(%rip), %rcx
        jmp     1f
probe_write_dr:
        lea     probe_dr_writes(%rip), %rcx
1:
        xor     %eax, %eax
        cmp     $8, %edi
        ja      probe_dr_bad
        shl     $4, %edi
        add     %rdi, %rcx
        jmp     *%rcx
probe_dr_bad:
        mov     $-1, %rax
        ret

        .balign 16
probe_dr_moves:
probe_dr_reads:
        .irp    n, 0, 1, 2, 3, 4, 5, 6, 7
        .balign 16
        mov     %dr\n, %rdx
        mov     %rdx, (%rsi)
        ret
        .endr
        .balign 16
        .byte   0x44, 0x0f, 0x21, 0xc2          /* mov %dr8, %rdx */
        mov     %rdx, (%rsi)
        ret
        .balign 16
probe_dr_writes:
        .irp    n, 0, 1, 2, 3, 4, 5, 6, 7
        .balign 16
        mov     %rsi, %dr\n
        ret
        .endr
        .balign 16
        .byte   0x44, 0x0f, 0x23, 0xc6          /* mov %rsi, %dr8 */
        ret
probe_dr_moves_end:
probe_dr_fixup:                         /* rax = vector << 16 | error code */
        ret

        .section .note.GNU-stack, "", @progbits
