// Direct access to a guest's virtual memory, as Xen's copy_from_guest/copy_to_guest: the
// hypervisor runs on the guest's own page tables (its L4 carries the hypervisor's slots), so
// it reads and writes guest addresses with plain instructions and lets the MMU check them. A
// fault in one of these accesses is the guest's: the fault handler finds the instruction in
// the fixup table and resumes at its fixup, which reports failure (-EFAULT to the guest)
// instead of halting the machine. A not-present fault while the domain has an L1 table
// unhooked by the writable-pagetable path first reattaches it and retries, so the hypervisor
// reaches every address the guest legitimately can, unhooked ranges included.
//
// The caller checks the range first (guest_memory does: Xen's __addr_ok), so only guest
// addresses are ever touched; CR0.WP makes read-only guest pages read-only for the hypervisor
// too, and nothing here runs with SMAP (this CPU model has none).
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "arch/x86/cpu/trap_frame.h"

extern "C" {
// Copies `bytes` between the hypervisor and the current address space; 0 when done, nonzero
// when a fault stopped it part way. Never call it with a hypervisor address on the guest side.
uint64_t guest_access_copy(void* to, const void* from, size_t bytes);
}

namespace guest_access {
// From the fault handler, for a fault in hypervisor context: true if the faulting instruction
// is a guest access (the frame then resumes at its fixup, or retries after a reattach).
bool fixup(TrapFrame& frame);

// One word of guest memory at `from` (which the caller checked, as guest_access_copy's), inline
// with a fixup of its own: false when the load faulted. A hypercall's request (an mmu_update is
// two words) is read this way, without the call and the two `rep movs` of guest_access_copy.
[[gnu::always_inline]] inline bool load_word(const uint64_t* from, uint64_t& value) {
  bool faulted = false;
  asm volatile(
      "1:     movq %[from], %[value]\n"
      "2:\n"
      "       .pushsection .guest_access_fixups, \"a\"\n"
      "       .balign 8\n"
      "       .quad 1b, 3f\n"
      "       .popsection\n"
      "       .pushsection .text.unlikely, \"ax\"\n"
      "3:     movb $1, %[faulted]\n"
      "       jmp 2b\n"
      "       .popsection\n"
      : [value] "=r"(value), [faulted] "+r"(faulted)
      : [from] "m"(*from));
  return !faulted;
}
}  // namespace guest_access
