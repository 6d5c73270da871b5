// selftest=linear-pt: linear (recursive) page tables as Xen 4.17 allows them (its pv-linear-pt
// default; XTF's xsa-182 PoC): a read-only entry of the kernel's L4 linking the L4 itself opens
// a read-only window onto the live page tables. Through it the guest reads its own L4 and the
// L1 entry of one of its pages; a store through it faults (the window is read-only all the way:
// the leaf it hits is a table's entry, not an L1 mapping the hypervisor would emulate). Refused,
// -EINVAL: a writable self-map, flipping the installed one writable (XSA-182's fast path), and a
// chain (XSA-240): a second pinned L4 B linked read-only from the kernel's L4 may not link
// further, and the kernel's L4, now holding a linear entry, may not be linked by B. B may map
// itself. Everything is removed again, B unpinned, and the frame audit (ours) is clean.
#include "arch/hypercall.h"
#include "arch/xen.h"
#include "kernel/memory/direct_map.h"
#include "kernel/memory/page_allocator.h"
#include "kernel/memory/physical_memory.h"
#include "arch/probe.h"
#include "selftest/memory/memory_selftests.h"
#include "selftest/selftest_page_tables.h"

namespace kernel {
namespace {
using namespace page_table_tests;

alignas(4096) volatile uint64_t watched_page[512];

long set_entry(Mfn table, unsigned index, uint64_t value) {
  return pv::ops.raw_mmu_update(table.machine_address() + index * 8, value);
}
unsigned index_of(uint64_t va, unsigned level) { return (va >> (12 + 9 * (level - 1))) & 511; }

// The address in the window of L4 slot `slot` (below 256: no sign extension) at which the
// hardware, walking the window, ends on entry `i1` of the table the indices i4, i3, i2 select.
volatile uint64_t* window(unsigned slot, unsigned i4, unsigned i3, unsigned i2, unsigned i1) {
  return reinterpret_cast<volatile uint64_t*>(uint64_t(slot) << 39 | uint64_t(i4) << 30 | uint64_t(i3) << 21 |
                                              uint64_t(i2) << 12 | uint64_t(i1) * 8);
}

uint64_t load(SelfTest& test, const char* what, volatile uint64_t* address) {
  uint64_t value = 0;
  test.check(what, probe_load64(address, &value), 0);
  return value;
}

void check_window(SelfTest& test, Mfn l4, unsigned slot) {
  const uint64_t va = reinterpret_cast<uint64_t>(&watched_page[0]);
  watched_page[0] = 1;  // mapped, and its L1 entry accessed
  const uint64_t self = load(test, "read the self-map entry through the window", window(slot, slot, slot, slot, slot));
  test.check("  it links the L4", static_cast<long>(PageTableEntry(self).mfn().value), static_cast<long>(l4.value));
  test.check("  read-only", static_cast<long>(self & PageTableEntry::kWritable), 0);
  const uint64_t top =
      load(test, "read the kernel's L4 slot 511 through the window", window(slot, slot, slot, slot, 511));
  test.check("  it is the slot as the direct map reads it", static_cast<long>(top == entries_of(l4)[511]), 1);
  const uint64_t leaf = load(test, "read the L1 entry of a kernel page through the window",
                             window(slot, index_of(va, 4), index_of(va, 3), index_of(va, 2), index_of(va, 1)));
  test.check("  it maps that page", static_cast<long>(PageTableEntry(leaf).mfn().value),
             static_cast<long>(va_to_mfn(va).value));
  test.check("a store to that L1 entry through the window faults",
             probe_store64(window(slot, index_of(va, 4), index_of(va, 3), index_of(va, 2), index_of(va, 1)), leaf), 1);
  test.check("a store to the L4 through the window faults", probe_store64(window(slot, slot, slot, slot, slot), self),
             1);
  test.check("  the L4 slot is unchanged", static_cast<long>(entries_of(l4)[slot] == self), 1);
}

// A zeroed frame pinned as an L4 (read-only in the direct map first, as a table must be).
bool pin_fresh_l4(SelfTest& test, Pfn& pfn) {
  pfn = allocate_zeroed_frame();
  const Mfn mfn = pfn_to_mfn(pfn);
  test.check("make a fresh frame read-only",
             pv::ops.set_kernel_mapping(pfn_to_va(pfn), PageTableEntry::make(mfn, kReadOnly)), 0);
  const long rc = pv::ops.raw_mmuext(MMUEXT_PIN_L4_TABLE, mfn.value);
  test.check("  pin it as an L4 (B)", rc, 0);
  return rc == 0;
}

void release_l4(SelfTest& test, Pfn pfn) {
  const Mfn mfn = pfn_to_mfn(pfn);
  test.check("unpin B", pv::ops.raw_mmuext(MMUEXT_UNPIN_TABLE, mfn.value), 0);
  if (pv::ops.set_kernel_mapping(pfn_to_va(pfn), PageTableEntry::make(mfn, kWritable)) == 0) page_allocator.free(pfn);
}

void check_chain(SelfTest& test, Mfn l4, unsigned slot, unsigned other_slot) {
  Pfn pfn;
  if (!pin_fresh_l4(test, pfn)) return;
  const Mfn b = pfn_to_mfn(pfn);
  test.check("link B read-only from the kernel's L4", set_entry(l4, other_slot, entry(b, kUserReadOnly)), 0);
  test.check("B linking the kernel's L4 (it holds linear entries) is -EINVAL",
             set_entry(b, slot, entry(l4, kUserReadOnly)), -XEN_EINVAL);
  test.check("B mapping itself read-only works", set_entry(b, slot, entry(b, kUserReadOnly)), 0);
  test.check("  remove it", set_entry(b, slot, 0), 0);
  test.check("unlink B", set_entry(l4, other_slot, 0), 0);
  test.check("now B may link the kernel's L4 (read-only)", set_entry(b, slot, entry(l4, kUserReadOnly)), 0);
  test.check("  and the kernel's L4, now a target, may not link B", set_entry(l4, other_slot, entry(b, kUserReadOnly)),
             -XEN_EINVAL);
  test.check("unlink the kernel's L4 from B", set_entry(b, slot, 0), 0);
  release_l4(test, pfn);
}
}  // namespace

void selftest_linear_pt(SelfTest& test) {
  const Mfn l4 = kernel_l4();
  const unsigned slot = free_slot(l4, 1, 255);
  const unsigned other_slot = slot > 1 ? free_slot(l4, 1, slot - 1) : 0;
  test.check("two free slots in the kernel's L4", static_cast<long>(slot != 0 && other_slot != 0), 1);
  if (slot == 0 || other_slot == 0) return;
  test.check("a writable self-map is -EINVAL", set_entry(l4, slot, entry(l4, kUserWritable)), -XEN_EINVAL);
  test.check("a read-only self-map works", set_entry(l4, slot, entry(l4, kUserReadOnly)), 0);
  test.check("  flipping it writable is -EINVAL (XSA-182)", set_entry(l4, slot, entry(l4, kUserWritable)), -XEN_EINVAL);
  test.check("  it stays read-only", static_cast<long>(entries_of(l4)[slot] & PageTableEntry::kWritable), 0);
  check_window(test, l4, slot);
  check_chain(test, l4, slot, other_slot);
  test.check("remove the self-map", set_entry(l4, slot, 0), 0);
  test.check("flush the TLB", pv::ops.raw_mmuext(MMUEXT_TLB_FLUSH_LOCAL, 0), 0);
  uint64_t value = 0;
  test.check("the window is gone (a load faults)", probe_load64(window(slot, slot, slot, slot, slot), &value), 1);
  check_audit(test);
}
}  // namespace kernel
