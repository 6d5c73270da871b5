/*
 * Xen ELF notes: how Xen's (and our) domain builder learns where to load and enter the
 * kernel. Numbers come from <xen/elfnote.h>; each note is {namesz, descsz, type, "Xen", desc}.
 */
#include <xen/elfnote.h>

#define XEN_FEATURE_DOM0_BIT 11   /* XENFEAT_dom0 from <xen/features.h> */

.macro NOTE type, body:vararg
    .pushsection .note.Xen, "a", @note
    .balign 4
    .long 2f - 1f          /* namesz */
    .long 4f - 3f          /* descsz */
    .long \type
1:  .asciz "Xen"
2:  .balign 4
3:  \body
4:  .balign 4
    .popsection
.endm

NOTE XEN_ELFNOTE_GUEST_OS, .asciz "pvguest"
NOTE XEN_ELFNOTE_GUEST_VERSION, .asciz "0.1"
NOTE XEN_ELFNOTE_XEN_VERSION, .asciz "xen-3.0"
NOTE XEN_ELFNOTE_LOADER, .asciz "generic"
NOTE XEN_ELFNOTE_VIRT_BASE, .quad 0xffffffff80000000
NOTE XEN_ELFNOTE_PADDR_OFFSET, .quad 0
NOTE XEN_ELFNOTE_ENTRY, .quad _start
NOTE XEN_ELFNOTE_HYPERCALL_PAGE, .quad hypercall_page
/* Page tables are only changed through hypercalls (or writes Xen emulates): no writable
 * page tables, no auto-translation, no supervisor-mode kernel. */
NOTE XEN_ELFNOTE_FEATURES, .asciz "writable_page_tables"
NOTE XEN_ELFNOTE_SUPPORTED_FEATURES, .long (1 << XEN_FEATURE_DOM0_BIT)
NOTE XEN_ELFNOTE_PAE_MODE, .asciz "yes"

/* Ours (common/elf/xen_elf_notes.h: kPvhvNoteName, kPvhvNoteReadsUnhookedEntries), skipped by
 * Xen as every note not named "Xen": this kernel tests upper-level page-table entries for none,
 * never for present, so it reads an L2 entry whose L1 writable pagetables unhooked (present bit
 * cleared, frame kept) as the table it names. Without it only unreachable L1s are detached. */
    .pushsection .note.Xen, "a", @note
    .balign 4
    .long 5             /* namesz: "PVHV" and its NUL */
    .long 0             /* descsz */
    .long 1             /* kPvhvNoteReadsUnhookedEntries */
    .asciz "PVHV"
    .balign 4
    .popsection
    .section .note.GNU-stack, "", @progbits
