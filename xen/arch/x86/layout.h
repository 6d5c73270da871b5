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

// The most CPUs the hypervisor brings up (the boot CPU included): more in the MADT are ignored.
#define MAX_CPUS 8
// Each CPU's stacks (and an AP's GDT) live in a window of their own at STACKS_VIRT_START +
// cpu * PER_CPU_WINDOW_BYTES: the window an address lies in names its CPU.
#define PER_CPU_WINDOW_BYTES 0x100000
// Where an AP starts in real mode (the startup IPI's vector is its page number): below the
// EBDA, in memory the frame allocator never hands out (below 1 MiB).
#define AP_TRAMPOLINE_PHYS 0x8000

// The words each CPU's entry stubs read (entry.S's cpu_entry_data, one cache line per CPU so
// no two CPUs share one): the syscall entry's scratch slot for the guest's rsp and the top of
// the CPU's entry stack.
#define CPU_ENTRY_BYTES 64
#define CPU_ENTRY_SCRATCH_RSP 0
#define CPU_ENTRY_STACK_TOP 8
