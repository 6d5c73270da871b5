/*
 * Raw mov from / to the debug registers for selftest=debugreg (arch/hostile_probes.h):
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

/*
 * Where selftest=debugreg's breakpoints fire (selftest/cpu/debug_traps.h records each #DB and #BP
 * raised in [probe_breakpoints, probe_breakpoints_end)). Each label after a probe's name marks
 * the instruction a trap is expected at.
 *   int probe_instruction_target(void): an instruction breakpoint's address; returns 1.
 *   void probe_store_watched(void) / probe_load_watched(void): a store / load of probe_watched.
 *   void probe_single_step(void): sets TF; the next instruction traps (the handler clears TF).
 *   long probe_movss_*: `mov probe_watched_ss, %ss` (a data breakpoint's address), then:
 *     nop; syscall (the hypercall rdi with argument rsi: its result); int3; int $0x80 (rax
 *     kSoftwareInterruptDelivered if the trap table's handler ran).
 *   long probe_syscall_flipped_rsp(long hypercall, long argument): the hypercall made with the
 *     top bit of rsp flipped, XSA-260's stack (events must be masked: nothing may be delivered
 *     onto it); rsp restored after it.
 */
        .data
        .balign 16
        .global probe_watched, probe_watched_ss
probe_watched:
        .quad   0, 0
probe_watched_ss:
        .quad   0

        .text
        .balign 16
        .global probe_breakpoints, probe_breakpoints_end
        .global probe_instruction_target, probe_store_watched, probe_store_watched_after
        .global probe_load_watched, probe_single_step, probe_single_step_after
        .global probe_movss_nop, probe_movss_nop_at, probe_movss_syscall, probe_movss_syscall_at
        .global probe_movss_int3, probe_movss_int3_at, probe_movss_int3_after
        .global probe_movss_int80, probe_movss_int80_at
probe_breakpoints:
probe_instruction_target:
        mov     $1, %eax
        ret
probe_store_watched:
        movq    $1, probe_watched(%rip)
probe_store_watched_after:
        ret
probe_load_watched:
        mov     probe_watched(%rip), %rax
        ret
probe_single_step:
        pushfq
        orq     $0x100, (%rsp)
        popfq
        nop
probe_single_step_after:
        ret
probe_movss_nop:
        mov     probe_watched_ss(%rip), %ss
probe_movss_nop_at:
        nop
        ret
probe_movss_syscall:
        mov     %rdi, %rax
        mov     %rsi, %rdi
        xor     %esi, %esi
        mov     probe_watched_ss(%rip), %ss
probe_movss_syscall_at:
        syscall
        ret
probe_movss_int3:
        mov     probe_watched_ss(%rip), %ss
probe_movss_int3_at:
        int3
probe_movss_int3_after:
        ret
probe_movss_int80:
        xor     %eax, %eax
        mov     probe_watched_ss(%rip), %ss
probe_movss_int80_at:
        int     $0x80
        ret
probe_breakpoints_end:

        .global probe_syscall_flipped_rsp
probe_syscall_flipped_rsp:
        push    %rbx
        mov     %rdi, %rax
        mov     %rsi, %rdi
        xor     %esi, %esi
        mov     %rsp, %rbx
        btc     $63, %rsp
        syscall
        mov     %rbx, %rsp
        pop     %rbx
        ret

        .section .note.GNU-stack, "", @progbits
