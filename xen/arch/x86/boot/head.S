/*
 * Multiboot v1 entry. The image is a 64-bit ELF linked high; the multiboot header uses the
 * a.out-kludge address fields so loaders (QEMU -kernel, GRUB) place it by physical address and
 * never look at the ELF class (QEMU refuses 64-bit ELFs otherwise). We start in 32-bit protected
 * mode with paging off, build nothing at run time beyond one loop over static tables, enter long
 * mode and jump to the higher half.
 */
#include "arch/x86/layout.h"

#define PHYS(sym) ((sym) - XEN_VIRT_START)
#define MB_MAGIC  0x1BADB002
#define MB_FLAGS  ((1 << 0) | (1 << 1) | (1 << 16))   /* page-align modules, memory map, addresses */

        .section .text.boot, "ax"
        .code32
        .align 8
multiboot_header:
        .long MB_MAGIC
        .long MB_FLAGS
        .long -(MB_MAGIC + MB_FLAGS)
        .long PHYS(multiboot_header)    /* header_addr */
        .long PHYS(__image_start)       /* load_addr */
        .long PHYS(__data_end)          /* load_end_addr */
        .long PHYS(__bss_end)           /* bss_end_addr */
        .long PHYS(start32)             /* entry_addr */

        .global start32
start32:
        cli
        cld
        mov     %eax, %esi              /* multiboot magic */
        mov     %ebx, %edi              /* multiboot info (physical) */
        mov     $PHYS(boot_stack_top), %esp

        /* Identity-map 0..4 GiB with 2 MiB pages: 4 page directories of 512 entries. */
        mov     $PHYS(boot_pd), %ebx
        xor     %ecx, %ecx
1:      mov     %ecx, %eax
        shl     $21, %eax
        or      $0x83, %eax             /* present, writable, 2 MiB */
        mov     %eax, (%ebx, %ecx, 8)
        mov     %ecx, %eax
        shr     $11, %eax               /* high dword: (index * 2 MiB) >> 32 */
        mov     %eax, 4(%ebx, %ecx, 8)
        inc     %ecx
        cmp     $2048, %ecx
        jne     1b

        mov     %cr4, %eax
        or      $(1 << 5), %eax         /* PAE */
        mov     %eax, %cr4
        mov     $PHYS(boot_pml4), %eax
        mov     %eax, %cr3

        mov     $0xc0000080, %ecx       /* EFER */
        rdmsr
        or      $(1 << 8), %eax         /* LME */
        push    %eax
        mov     $0x80000001, %eax
        cpuid
        pop     %eax
        test    $(1 << 20), %edx        /* NX available: enable it (guests may use it) */
        jz      2f
        or      $(1 << 11), %eax
2:      mov     $0xc0000080, %ecx
        wrmsr

        mov     %cr0, %eax
        or      $((1 << 31) | (1 << 16) | 1), %eax   /* PG, WP, PE */
        mov     %eax, %cr0

        lgdt    PHYS(boot_gdt_pointer)
        ljmp    $0x08, $PHYS(start64_low)

        .code64
start64_low:
        movabs  $start64, %rax
        jmp     *%rax

        .text
start64:
        mov     $0x10, %eax
        mov     %eax, %ds
        mov     %eax, %es
        mov     %eax, %ss
        xor     %eax, %eax
        mov     %eax, %fs
        mov     %eax, %gs
        movabs  $boot_stack_top, %rsp
        xor     %ebp, %ebp
        /* start_xen(magic, info_phys) */
        mov     %esi, %eax
        mov     %edi, %esi
        mov     %eax, %edi
        call    start_xen
4:      hlt
        jmp     4b

        .section .data.boot, "aw"
        .align 16
boot_gdt:
        .quad 0
        .quad 0x00af9a000000ffff        /* 0x08: 64-bit code */
        .quad 0x00cf92000000ffff        /* 0x10: data */
boot_gdt_end:
boot_gdt_pointer:
        .word boot_gdt_end - boot_gdt - 1
        .long PHYS(boot_gdt)

        .section .data.pagetables, "aw"
        .align 4096
        .global boot_pml4
boot_pml4:                              /* slot 0: identity; 261: image; 262: direct map */
        .quad PHYS(boot_pdpt_low) + 3
        .fill 260, 8, 0
        .quad PHYS(boot_pdpt_image) + 3
        .quad PHYS(boot_pdpt_low) + 3
        .fill 249, 8, 0
        .align 4096
boot_pdpt_low:                          /* 0..4 GiB: shared by the identity and direct maps */
        .quad PHYS(boot_pd) + 0x0003
        .quad PHYS(boot_pd) + 0x1003
        .quad PHYS(boot_pd) + 0x2003
        .quad PHYS(boot_pd) + 0x3003
        .fill 508, 8, 0
        .align 4096
boot_pdpt_image:                        /* XEN_VIRT_START maps physical 0..1 GiB */
        .fill 322, 8, 0
        .quad PHYS(boot_pd) + 3
        .fill 189, 8, 0

        .section .bss.pagetables, "aw", @nobits
        .align 4096
        .global boot_pd
boot_pd:
        .skip 4 * 4096

        .section .bss.stack, "aw", @nobits
        .align 4096
        .global boot_stack_bottom, boot_stack_top
boot_stack_bottom:
        .skip STACK_BYTES
boot_stack_top:
