// selftest=flush-clock: a stale writable translation of a new page table is impossible.
//
// The hypervisor skips the flush a type change asks for when its TLB flush clock says that
// nothing of the frame's old use can be cached (mm/tlb_flush_clock.h). Each case leaves a
// writable translation of a data frame in the TLB on purpose, by removing its mapping in a
// way that does not invalidate it, then makes the frame an L1 and stores a forbidden entry
// (a writable mapping of the table itself) through the old translation: the store must fault
// or be refused, never land in the table. Xen 4.17 answers the same (it flushes on every such
// type change whose frame was used since its last flush), so the checks run there too.
//
//   1. the mapping removed by mmu_update, which invalidates nothing;
//   2. the mapping removed by update_va_mapping with UVMF_INVLPG, but the direct-map L1 that
//      held it is linked a second time, so the frame was also mapped at an alias;
//   3. as 2, with the second link removed (without a flush) before the mapping was.
#include "arch/hypercall.h"
#include "arch/xen.h"
#include "kernel/memory/direct_map.h"
#include "lib/linux_abi.h"
#include "kernel/memory/page_allocator.h"
#include "kernel/memory/physical_memory.h"
#include "arch/probe.h"
#include "kernel/measurement/pvhv.h"
#include "selftest/memory/memory_selftests.h"
#include "selftest/selftest_page_tables.h"

namespace kernel {
namespace {
using namespace page_table_tests;

long set_entry(uint64_t machine_address, uint64_t value) { return pv::ops.raw_mmu_update(machine_address, value); }

pv::PageTableSlot slot_for(uint64_t va, Level level) {
  pv::PageTableSlot slot;
  walk(kernel_l4(), va, level, slot);
  return slot;
}
Mfn table_of(const pv::PageTableSlot& slot) { return Mfn{slot.machine_address >> 12}; }

// Our hypervisor's flush counters; `counted` false elsewhere (Xen 4.17 has none).
struct Flushes {
  bool counted = false;
  uint64_t type_change = 0;
};
Flushes read_flushes() {
  pvhv_counters counters{};
  if (read_pvhv_counters(counters) != 0) return Flushes{};
  return Flushes{true, counters.type_change_flushes};
}

// The control: a store through `stale` (the frame still data, its mapping gone or read-only
// in memory) shows whether the writable translation is still cached. On ours nothing flushes
// in between, so it must be; Xen 4.17's XPTI reloads CR3 on every hypercall, so there it is
// only reported.
void check_stale_translation(SelfTest& test, volatile uint64_t* stale, bool ours) {
  long faulted = probe_store64(stale, 0);
  if (ours)
    test.check("  control: the old writable translation is still cached (a store does not fault)", faulted, 0);
  else
    test.note("  control: a store through the old translation faulted", faulted);
}

// Pins `frame` as an L1, stores a writable mapping of it through `stale`, reattaches, and
// checks that the entry never took effect; then unpins it.
void pin_and_attack(SelfTest& test, Mfn frame, volatile uint64_t* stale, unsigned index) {
  Flushes before = read_flushes();
  test.check("  pin the frame as an L1", pv::ops.raw_mmuext(MMUEXT_PIN_L1_TABLE, frame.value), 0);
  Flushes after = read_flushes();
  if (before.counted && after.counted)
    test.check("  the type change flushed the TLB", static_cast<long>(after.type_change - before.type_change), 1);
  long faulted = probe_store64(&stale[index], entry(frame, kUserWritable));
  test.note("  a writable mapping of the new L1 stored through the old translation (faulted)", faulted);
  test.check("  an empty mmuext_op", empty_mmuext_op(), 0);
  test.check("  the store never took effect", static_cast<long>(entries_of(frame)[index]), 0);
  test.check("  unpin the L1", pv::ops.raw_mmuext(MMUEXT_UNPIN_TABLE, frame.value), 0);
}

void release(Pfn pfn) {
  Mfn mfn = pfn_to_mfn(pfn);
  if (pv::ops.set_kernel_mapping(pfn_to_va(pfn), PageTableEntry::make(mfn, kWritable)) == 0) page_allocator.free(pfn);
}

void removed_by_mmu_update(SelfTest& test, bool ours) {
  test.note("case 1: the mapping removed by mmu_update", 1);
  Pfn pfn = allocate_zeroed_frame();
  Mfn mfn = pfn_to_mfn(pfn);
  auto* direct = reinterpret_cast<volatile uint64_t*>(pfn_to_va(pfn));
  test.check("  a store through the direct map (caches its writable translation)", probe_store64(&direct[1], 0), 0);
  pv::PageTableSlot mapping = slot_for(pfn_to_va(pfn), Level::l1);
  test.check("  mmu_update makes the mapping read-only", set_entry(mapping.machine_address, entry(mfn, kReadOnly)), 0);
  check_stale_translation(test, &direct[1], ours);
  pin_and_attack(test, mfn, direct, 2);
  release(pfn);
}

// Cases 2 and 3: the direct-map L1 M holding the frame's mapping is also linked at a free
// slot of the kernel's L2, so the frame is mapped at `alias` too.
void removed_with_an_alias(SelfTest& test, bool ours, bool unlink_first) {
  test.note(unlink_first ? "case 3: an alias unlinked without a flush, then update_va_mapping + UVMF_INVLPG"
                         : "case 2: update_va_mapping + UVMF_INVLPG, the L1 linked twice",
            unlink_first ? 3 : 2);
  Pfn pfn = allocate_zeroed_frame();
  Mfn mfn = pfn_to_mfn(pfn);
  const uint64_t va = pfn_to_va(pfn);
  Mfn m = table_of(slot_for(va, Level::l1));
  Mfn l2 = table_of(slot_for(kVirtBase, Level::l2));
  unsigned slot = free_slot(l2, 256, 500);
  test.check("  a free slot in the kernel's L2", static_cast<long>(slot != 0), 1);
  if (slot == 0) return;
  const uint64_t link_address = l2.machine_address() + slot * 8;
  test.check("  link M there too", set_entry(link_address, entry(m, PageTableEntry::kTableFlags)), 0);
  auto* alias = reinterpret_cast<volatile uint64_t*>(kVirtBase + slot * kRegion + (va & (kRegion - 1)));
  test.check("  a store through the alias (caches its writable translation)", probe_store64(&alias[1], 0), 0);
  if (unlink_first) test.check("  unlink M's second link, no flush", set_entry(link_address, 0), 0);
  test.check("  update_va_mapping makes the direct map read-only (UVMF_INVLPG)",
             pv::ops.set_kernel_mapping(va, PageTableEntry::make(mfn, kReadOnly)), 0);
  check_stale_translation(test, &alias[1], ours);
  pin_and_attack(test, mfn, alias, 3);
  if (!unlink_first) test.check("  unlink M's second link", set_entry(link_address, 0), 0);
  test.check("  flush the TLB (the alias is gone)", pv::ops.raw_mmuext(MMUEXT_TLB_FLUSH_LOCAL, 0), 0);
  release(pfn);
}
}  // namespace

void selftest_flush_clock(SelfTest& test) {
  const bool ours = read_flushes().counted;
  removed_by_mmu_update(test, ours);
  removed_with_an_alias(test, ours, false);
  removed_with_an_alias(test, ours, true);
  check_audit(test);
}
}  // namespace kernel
