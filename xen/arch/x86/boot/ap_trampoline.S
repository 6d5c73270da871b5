/*
 * Where an AP starts: the startup IPI puts it in real mode at AP_TRAMPOLINE_PHYS (CS = its
 * page << 8, IP = 0). This block is assembled into the image and copied there by the boot CPU
 * (platform/smp_boot), which fills ap_parameters before each start. The AP goes to protected
 * mode on a GDT of its own here, loads the boot CPU's CR4, CR3 (the hypervisor's page tables,
 * which still identity-map low memory), EFER and CR0, which enters long mode, and calls
 * parameters.entry(parameters.cpu) on parameters.stack, in the high half.
 */
#include "arch/x86/layout.h"

#define OFFSET(sym) ((sym) - ap_trampoline_start)
#define PHYSICAL(sym) (AP_TRAMPOLINE_PHYS + OFFSET(sym))

        .section .rodata, "a"   /* copied, never run in place */
        .align 16
        .global ap_trampoline_start, ap_trampoline_end, ap_parameters
        .code16
ap_trampoline_start:
        cli
        cld
        mov     %cs, %ax
        mov     %ax, %ds
        lgdtl   OFFSET(trampoline_gdt_pointer)
        mov     %cr0, %eax
        or      $1, %eax                /* PE */
        mov     %eax, %cr0
        ljmpl   $0x08, $PHYSICAL(trampoline_32)

        .code32
trampoline_32:
        mov     $0x10, %eax
        mov     %eax, %ds
        mov     %eax, %es
        mov     %eax, %ss
        mov     PHYSICAL(parameter_cr4), %eax
        mov     %eax, %cr4
        mov     PHYSICAL(parameter_cr3), %eax
        mov     %eax, %cr3
        mov     $0xc0000080, %ecx       /* EFER: LME (and NXE, SCE as the boot CPU's) */
        mov     PHYSICAL(parameter_efer), %eax
        mov     PHYSICAL(parameter_efer) + 4, %edx
        wrmsr
        mov     PHYSICAL(parameter_cr0), %eax
        mov     %eax, %cr0              /* PG: long mode */
        ljmp    $0x18, $PHYSICAL(trampoline_64)

        .code64
trampoline_64:
        mov     $0x10, %eax
        mov     %eax, %ds
        mov     %eax, %es
        mov     %eax, %ss
        mov     PHYSICAL(parameter_stack), %rsp
        mov     PHYSICAL(parameter_cpu), %edi
        mov     PHYSICAL(parameter_entry), %rax
        call    *%rax                   /* never returns */
1:      cli
        hlt
        jmp     1b

        .align 8
trampoline_gdt:
        .quad 0
        .quad 0x00cf9a000000ffff        /* 0x08: 32-bit code */
        .quad 0x00cf92000000ffff        /* 0x10: data */
        .quad 0x00af9a000000ffff        /* 0x18: 64-bit code */
trampoline_gdt_end:
trampoline_gdt_pointer:
        .word trampoline_gdt_end - trampoline_gdt - 1
        .long PHYSICAL(trampoline_gdt)

        .align 8
ap_parameters:                          /* smp_boot's ApParameters, in this order */
parameter_cr0:   .quad 0
parameter_cr3:   .quad 0
parameter_cr4:   .quad 0
parameter_efer:  .quad 0
parameter_stack: .quad 0
parameter_entry: .quad 0
parameter_cpu:   .quad 0
ap_trampoline_end:
