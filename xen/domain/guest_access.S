/*
 * The guest accesses of domain/guest_access.h. Each instruction that touches guest memory is
 * listed in .guest_access_fixups with the address to resume at if it faults; rep movs are
 * restartable, so a retry (after a reattach) continues where the fault stopped them.
 */
        .text
        .global guest_access_copy
/* uint64_t guest_access_copy(void* to [rdi], const void* from [rsi], size_t bytes [rdx]) */
guest_access_copy:
        mov     %rdx, %rcx
        shr     $3, %rcx
1:      rep movsq
        mov     %edx, %ecx
        and     $7, %ecx
2:      rep movsb
        xor     %eax, %eax
        ret
3:      mov     $1, %eax
        ret

        .pushsection .guest_access_fixups, "a"
        .balign 8
        .quad 1b, 3b
        .quad 2b, 3b
        .popsection

        .section .note.GNU-stack, "", @progbits
