// The hypervisor's virtual memory layout. Everything the hypervisor needs while a guest runs
// lives in the L4 slots Xen reserves for itself (256..271), so every guest L4 shares them.
#pragma once

#define XEN_VIRT_START 0xffff82d080000000        // image: phys 0..1 GiB mapped here
#define DIRECTMAP_VIRT_START 0xffff830000000000  // all RAM, phys + this
#define RO_MPT_VIRT_START 0xffff800000000000     // machine-to-phys table, read-only to guests
#define STACKS_VIRT_START 0xffff82d0c0000000     // the hypervisor's stacks, each above a guard page
#define XEN_LOAD_ADDRESS 0x100000                // where the multiboot loader puts the image
#define XEN_FIRST_SLOT 256
#define XEN_LAST_SLOT 271

#define SELECTOR_HYPERVISOR_CS 0xe008
#define SELECTOR_HYPERVISOR_DS 0xe010
#define SELECTOR_TSS 0xe040
#define GDT_BYTES 0xe050

#define STACK_BYTES (8 * 4096)
