/*
 * The fuzzer's probes (fuzz/fuzz*.cpp): every instruction the fuzzer issues that may trap
 * runs inside fuzz_try. While fuzz_try_active is set, kernel::fuzz_fixup (called by the trap
 * dispatcher) either lets a trap continue (single-step, alignment check: the flag is cleared)
 * or resumes at fuzz_try_recovery, which returns from fuzz_try with fuzz_try_faulted set.
 */
#define HYPERCALL_IRET 23
        .text

/* long fuzz_try(long (*probe)(uint64_t, uint64_t, uint64_t), uint64_t a, uint64_t b, uint64_t c) */
        .global fuzz_try, fuzz_try_recovery
fuzz_try:
        push    %rbx
        push    %rbp
        push    %r12
        push    %r13
        push    %r14
        push    %r15
        sub     $8, %rsp                /* the probe is entered with the usual alignment */
        mov     %rsp, fuzz_try_rsp(%rip)
        movb    $0, fuzz_try_faulted(%rip)
        movb    $1, fuzz_try_active(%rip)
        mov     %rdi, %rax
        mov     %rsi, %rdi
        mov     %rdx, %rsi
        mov     %rcx, %rdx
        call    *%rax
        movb    $0, fuzz_try_active(%rip)
        jmp     1f
fuzz_try_recovery:
        mov     fuzz_try_rsp(%rip), %rsp
        movb    $0, fuzz_try_active(%rip)
        movb    $1, fuzz_try_faulted(%rip)
        xor     %eax, %eax
1:      cld
        add     $8, %rsp
        pop     %r15
        pop     %r14
        pop     %r13
        pop     %r12
        pop     %rbp
        pop     %rbx
        ret

/* A hypercall with any rax (64 bits) and six argument registers, straight through syscall
 * (not the hypercall page, which takes the number as an immediate).
 * long fuzz_hypercall(const lib::fuzz::Call* call) */
        .global fuzz_hypercall
fuzz_hypercall:
        mov     %rdi, %r11
        mov     0(%r11), %rax
        mov     8(%r11), %rdi
        mov     16(%r11), %rsi
        mov     24(%r11), %rdx
        mov     32(%r11), %r10
        mov     40(%r11), %r8
        mov     48(%r11), %r9
        syscall
        ret

/* The same with RFLAGS set to `flags` (popf) around the syscall; the flags the hypercall
 * returned with go to fuzz_flags_after, the caller's come back.
 * long fuzz_hypercall_flags(const lib::fuzz::Call* call, uint64_t flags) */
        .global fuzz_hypercall_flags
fuzz_hypercall_flags:
        pushfq
        push    %rsi
        mov     %rdi, %r11
        mov     0(%r11), %rax
        mov     8(%r11), %rdi
        mov     16(%r11), %rsi
        mov     24(%r11), %rdx
        mov     32(%r11), %r10
        mov     40(%r11), %r8
        mov     48(%r11), %r9
        popfq
        syscall
        pushfq
        pop     %rcx
        mov     %rcx, fuzz_flags_after(%rip)
        popfq
        ret

/* HYPERVISOR_iret with the nine-word context at `context` (rax, r11, rcx, flags, rip, cs,
 * rflags, rsp, ss): the context's rip is fuzz_iret_landing. A hypervisor that refuses the
 * call (an aliased number) returns after the syscall, which falls into the landing too.
 * long fuzz_iret_probe(uint64_t* context, uint64_t number) */
        .global fuzz_iret_probe, fuzz_iret_landing
fuzz_iret_probe:
        mov     %rsp, fuzz_iret_rsp(%rip)
        mov     %rsi, %rax
        mov     %rdi, %rsp
        syscall
fuzz_iret_landing:
        mov     fuzz_iret_rsp(%rip), %rsp
        pushfq
        andl    $~0x54500, (%rsp)       /* TF, DF, NT, AC, RF off */
        popfq
        ret

/* Any hypercall made with the stack pointer at an iret context (a multicall with an iret
 * entry: Xen runs it and ends the batch there). It comes back at fuzz_iret_landing either way.
 * long fuzz_iret_call(uint64_t* context, const lib::fuzz::Call* call) */
        .global fuzz_iret_call
fuzz_iret_call:
        mov     %rsp, fuzz_iret_rsp(%rip)
        mov     %rsi, %r11
        mov     %rdi, %rsp
        mov     0(%r11), %rax
        mov     8(%r11), %rdi
        mov     16(%r11), %rsi
        mov     24(%r11), %rdx
        mov     32(%r11), %r10
        mov     40(%r11), %r8
        mov     48(%r11), %r9
        syscall
        jmp     fuzz_iret_landing

/* Loads and stores that may fault: (address, value, operand) -> 0, or the value loaded. */
        .global fuzz_load64, fuzz_store64, fuzz_store32_low, fuzz_store32_high, fuzz_store16, fuzz_store8
        .global fuzz_xchg64, fuzz_cmpxchg64, fuzz_or64, fuzz_and64, fuzz_bts64, fuzz_btr64, fuzz_rep_stosq
        .global fuzz_movnti64
fuzz_load64:
        mov     (%rdi), %rax
        ret
fuzz_store64:
        mov     %rsi, (%rdi)
        xor     %eax, %eax
        ret
fuzz_store32_low:
        mov     %esi, (%rdi)
        xor     %eax, %eax
        ret
fuzz_store32_high:
        shr     $32, %rsi
        mov     %esi, 4(%rdi)
        xor     %eax, %eax
        ret
fuzz_store16:
        mov     %si, (%rdi)
        xor     %eax, %eax
        ret
fuzz_store8:
        mov     %sil, (%rdi)
        xor     %eax, %eax
        ret
fuzz_xchg64:
        xchg    %rsi, (%rdi)
        xor     %eax, %eax
        ret
fuzz_cmpxchg64:
        mov     %rdx, %rax
        lock cmpxchg %rsi, (%rdi)
        xor     %eax, %eax
        ret
fuzz_or64:
        or      %rdx, (%rdi)
        xor     %eax, %eax
        ret
fuzz_and64:
        and     %rdx, (%rdi)
        xor     %eax, %eax
        ret
fuzz_bts64:
        bts     %rdx, (%rdi)
        xor     %eax, %eax
        ret
fuzz_btr64:
        btr     %rdx, (%rdi)
        xor     %eax, %eax
        ret
fuzz_rep_stosq:
        mov     %rsi, %rax
        mov     %rdx, %rcx
        cld
        rep stosq
        xor     %eax, %eax
        ret
fuzz_movnti64:
        movnti  %rsi, (%rdi)
        xor     %eax, %eax
        ret

/* Port I/O: (port, value, count/buffer). in* return what was read. */
        .global fuzz_inb, fuzz_inw, fuzz_inl, fuzz_outb, fuzz_outw, fuzz_outl
        .global fuzz_insb, fuzz_insw, fuzz_insl, fuzz_outsb, fuzz_outsw, fuzz_outsl
fuzz_inb:
        mov     %edi, %edx
        xor     %eax, %eax
        inb     %dx, %al
        ret
fuzz_inw:
        mov     %edi, %edx
        xor     %eax, %eax
        inw     %dx, %ax
        ret
fuzz_inl:
        mov     %edi, %edx
        inl     %dx, %eax
        ret
fuzz_outb:
        mov     %edi, %edx
        mov     %esi, %eax
        outb    %al, %dx
        xor     %eax, %eax
        ret
fuzz_outw:
        mov     %edi, %edx
        mov     %esi, %eax
        outw    %ax, %dx
        xor     %eax, %eax
        ret
fuzz_outl:
        mov     %edi, %edx
        mov     %esi, %eax
        outl    %eax, %dx
        xor     %eax, %eax
        ret
/* String forms: (port, buffer, count) */
.macro STRING_PORT name, insn
fuzz_\name:
        mov     %rdx, %rcx
        mov     %edi, %edx
        mov     %rsi, %rdi
        cld
        rep \insn
        mov     %rcx, %rax      /* what was left */
        ret
.endm
STRING_PORT insb, insb
STRING_PORT insw, insw
STRING_PORT insl, insl
.macro STRING_OUT name, insn
fuzz_\name:
        mov     %rdx, %rcx
        mov     %edi, %edx
        cld
        rep \insn
        mov     %rcx, %rax
        ret
.endm
STRING_OUT outsb, outsb
STRING_OUT outsw, outsw
STRING_OUT outsl, outsl

/* Instructions a ring-3 guest kernel may not execute (or that trap): (rax, rcx, rdx). */
        .global fuzz_int_table, fuzz_insn_int3, fuzz_insn_into, fuzz_insn_hlt, fuzz_insn_cli, fuzz_insn_sti
        .global fuzz_insn_rdmsr, fuzz_insn_wrmsr, fuzz_insn_mov_cr3, fuzz_insn_read_cr0, fuzz_insn_rdpmc
        .global fuzz_insn_lgdt, fuzz_insn_lidt, fuzz_insn_invlpg, fuzz_insn_wbinvd, fuzz_insn_cpuid
        .global fuzz_insn_forced_cpuid, fuzz_insn_swapgs, fuzz_insn_rdtscp, fuzz_insn_icebp
        .balign 16
/* 256 entries of 4 bytes: int $n; ret; nop (call fuzz_int_table + 4 * n) */
fuzz_int_table:
        .set vector, 0
        .rept 256
        .byte 0xcd, vector, 0xc3, 0x90
        .set vector, vector + 1
        .endr
fuzz_insn_int3:
        .byte 0xcc
        ret
fuzz_insn_into:
        .byte 0xce              /* invalid in 64-bit mode: #UD */
        ret
fuzz_insn_hlt:
        hlt
        ret
fuzz_insn_cli:
        cli
        ret
fuzz_insn_sti:
        sti
        ret
fuzz_insn_rdmsr:
        mov     %esi, %ecx
        rdmsr
        ret
fuzz_insn_wrmsr:
        mov     %rdi, %rax
        mov     %esi, %ecx
        wrmsr
        ret
fuzz_insn_mov_cr3:
        mov     %rdi, %cr3
        ret
fuzz_insn_read_cr0:
        mov     %cr0, %rax
        ret
fuzz_insn_rdpmc:
        mov     %esi, %ecx
        rdpmc
        ret
fuzz_insn_lgdt:
        lgdt    (%rdi)
        ret
fuzz_insn_lidt:
        lidt    (%rdi)
        ret
fuzz_insn_invlpg:
        invlpg  (%rdi)
        ret
fuzz_insn_wbinvd:
        wbinvd
        ret
fuzz_insn_cpuid:
        push    %rbx
        mov     %rdi, %rax
        mov     %rsi, %rcx
        cpuid
        pop     %rbx
        ret
fuzz_insn_forced_cpuid:         /* Xen's forced-emulation prefix: ud2; .ascii "xen"; cpuid */
        push    %rbx
        mov     %rdi, %rax
        mov     %rsi, %rcx
        ud2
        .ascii  "xen"
        cpuid
        pop     %rbx
        ret
fuzz_insn_swapgs:
        swapgs
        ret
fuzz_insn_rdtscp:
        rdtscp
        ret
fuzz_insn_icebp:
        .byte 0xf1
        ret

        .bss
        .balign 8
        .global fuzz_try_rsp, fuzz_try_active, fuzz_try_faulted, fuzz_flags_after, fuzz_iret_rsp
fuzz_try_rsp:     .quad 0
fuzz_iret_rsp:    .quad 0
fuzz_flags_after: .quad 0
fuzz_try_active:  .byte 0
fuzz_try_faulted: .byte 0
        .section .note.GNU-stack, "", @progbits
