// Hostile-guest tests of the writable-pagetable path (issue 8, items 3, 4, 5 and 10): each
// performs, with plain stores and ordinary hypercalls, a sequence that broke isolation under
// ptwr=writable, and checks what Xen 4.17 answers (which emulates every page-table write):
// the forbidden mapping is refused, nothing of the hypervisor becomes readable, and every
// entry written directly is validated. The same checks hold under ptwr=emulate and on Xen
// 4.17, so the tests run in every mode; on our hypervisor the frame audit must also be clean.
//
//   ptwr-overlap  a forged writable mapping entry reaching a snapshot and a release (item 3)
//   ptwr-alias    a writable TLB alias of a detached table surviving its reattach (item 4)
//   ptwr-links    65,536 links to one L1 wrapping its link count (item 5)
//   ptwr-unlink   an unlink without a flush, then an inactive detach of the table (item 10)
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

constexpr uint64_t kKernelL3Base = 0xffffff8000000000ull;  // L4 slot 511
constexpr Mfn kHypervisorFrame{0x100};                     // the hypervisor's image (its multiboot header)

alignas(4096) uint8_t scratch_page[4096];

long set_entry(Mfn table, unsigned index, uint64_t value) {
  return pv::ops.raw_mmu_update(table.machine_address() + index * 8, value);
}
Mfn scratch_mfn() { return va_to_mfn(reinterpret_cast<uint64_t>(scratch_page)); }

// The table of `level` that translates va in the kernel's address space.
Mfn table_for(uint64_t va, Level level) {
  pv::PageTableSlot slot;
  walk(kernel_l4(), va, level, slot);
  return Mfn{slot.machine_address >> 12};
}
// A frame taken from the allocator for a page table, read-only in the direct map.
Mfn table_frame_at(Pfn pfn) {
  Mfn mfn = pfn_to_mfn(pfn);
  pv::ops.set_kernel_mapping(pfn_to_va(pfn), PageTableEntry::make(mfn, kReadOnly));
  return mfn;
}
// Gives a table frame (no longer a table) back to the allocator, writable again.
void release_table_frame(Mfn mfn) {
  Pfn pfn = mfn_to_pfn(mfn);
  if (pv::ops.set_kernel_mapping(pfn_to_va(pfn), PageTableEntry::make(mfn, kWritable)) == 0) page_allocator.free(pfn);
}

// A frame in a 2 MiB region of the direct map that neither this code nor its stack is in and
// whose direct-map L1 lies outside it: unhooking that L1 leaves the test running. Frames
// skipped on the way go back to the allocator.
bool allocate_far_frame(Pfn& found) {
  static Pfn skipped[4096];
  unsigned count = 0;
  uint64_t code_region = (reinterpret_cast<uint64_t>(&allocate_far_frame) - kVirtBase) / kRegion;
  uint64_t stack_region = (reinterpret_cast<uint64_t>(&count) - kVirtBase) / kRegion;
  bool ok = false;
  while (count < sizeof(skipped) / sizeof(skipped[0])) {
    Pfn pfn = allocate_zeroed_frame();
    uint64_t region = (pfn_to_va(pfn) - kVirtBase) / kRegion;
    Pfn l1 = mfn_to_pfn(table_for(pfn_to_va(pfn), Level::l1));
    if (region != code_region && region != stack_region && (pfn_to_va(l1) - kVirtBase) / kRegion != region) {
      found = pfn;
      ok = true;
      break;
    }
    skipped[count++] = pfn;
  }
  for (unsigned i = 0; i < count; ++i) page_allocator.free(skipped[i]);
  return ok;
}

// Only reached where the attack already worked: shows that the hypervisor's frame is now
// readable through the table the guest got writable (`writable_table_va`), linked under the
// pinned L2 `l2` at a free kernel L3 slot.
void show_hypervisor_frame_readable(SelfTest& test, uint64_t writable_table_va, Mfn l2) {
  pv::ops.invalidate_page(writable_table_va);
  *reinterpret_cast<volatile uint64_t*>(writable_table_va) = entry(kHypervisorFrame, kUserReadOnly);
  Mfn l3 = table_for(kVirtBase, Level::l3);
  unsigned slot = free_slot(l3, 1, 509);
  if (slot == 0 || set_entry(l3, slot, entry(l2, PageTableEntry::kTableFlags)) != 0) return;
  uint64_t value = 0;
  long faulted = probe_load64(reinterpret_cast<volatile uint64_t*>(kKernelL3Base + (uint64_t{slot} << 30)), &value);
  test.check("the hypervisor's frame 0x100 cannot be read", faulted, 1);
  test.note("  its first word", static_cast<long>(value));
  set_entry(l3, slot, 0);
}
}  // namespace

// Item 3. A: an L1 only an unreachable pinned L2 (X) links, so its detach is "inactive"; B:
// the direct-map L1 holding A's mapping entry, which the detach makes writable. Three plain
// stores: into A, into B (detached in the other slot: its snapshot must not keep the forged
// writable entry), and into that mapping entry (rewritten as the guest sees it: read-only).
// Then one empty mmuext_op (both reattach), and an mmu_update mapping A writable: Xen refuses
// it (-EBUSY: A is an L1 X still links). Had A lost its type, the guest would write A and,
// linking X, read the hypervisor's frame 0x100.
void selftest_ptwr_overlap(SelfTest& test) {
  Pfn a_pfn;
  if (!allocate_far_frame(a_pfn)) {
    test.check("a frame for the attacked L1", 0, 1);
    return;
  }
  Mfn a = table_frame_at(a_pfn);
  Mfn x = new_page_table_frame();
  test.check("link A from X", set_entry(x, 0, entry(a, PageTableEntry::kTableFlags)), 0);
  test.check("pin X as an L2 (A becomes an L1 no running table reaches)",
             pv::ops.raw_mmuext(MMUEXT_PIN_L2_TABLE, x.value), 0);
  pv::PageTableSlot a_mapping;
  walk(kernel_l4(), pfn_to_va(a_pfn), Level::l1, a_mapping);
  const uint64_t a_mapping_entry = read_entry(a_mapping).raw();
  volatile uint64_t* b = entries_of(Mfn{a_mapping.machine_address >> 12});
  const unsigned neighbour = ((a_mapping.machine_address & 0xfff) / 8) ^ 1;

  volatile uint64_t* a_entries = entries_of(a);
  test.check("store 1: a valid entry into A", probe_store64(&a_entries[5], entry(scratch_mfn(), kReadOnly)), 0);
  test.check("store 2: an entry of B rewritten", probe_store64(&b[neighbour], b[neighbour]), 0);
  test.check("store 3: A's mapping entry rewritten read-only", probe_store64(a_mapping.kernel_va, a_mapping_entry), 0);
  test.check("an empty mmuext_op", empty_mmuext_op(), 0);

  pv::PageTableSlot scratch;
  walk(kernel_l4(), reinterpret_cast<uint64_t>(scratch_page), Level::l1, scratch);
  const uint64_t scratch_entry = read_entry(scratch).raw();
  long rc = pv::ops.raw_mmu_update(scratch.machine_address, entry(a, kWritable));
  test.check("mapping A writable is refused (it is an L1 X links)", rc, -XEN_EBUSY);
  if (rc == 0) {
    show_hypervisor_frame_readable(test, reinterpret_cast<uint64_t>(scratch_page), x);
    pv::ops.raw_mmu_update(scratch.machine_address, scratch_entry);
    pv::ops.invalidate_page(reinterpret_cast<uint64_t>(scratch_page));
  }
  test.check("A's entry written directly was validated",
             static_cast<long>(PageTableEntry(a_entries[5]).mfn() == scratch_mfn()), 1);
  test.check("A's mapping is read-only again", static_cast<long>(read_entry(a_mapping).writable()), 0);
  test.check("unpin X (A is no table any more)", pv::ops.raw_mmuext(MMUEXT_UNPIN_TABLE, x.value), 0);
  check_audit(test);
  release_table_frame(x);
  release_table_frame(a);
}

// Item 4. T: an L1 (pinned, linked nowhere); M: the direct-map L1 holding T's mapping entry,
// linked a second time at a free slot of the kernel's L2, so T is also mapped at `alias`. A
// store through the direct map detaches T; a store through the alias then goes through the
// forged writable entry natively and may leave a writable translation for `alias` in the
// TLB; after the reattach, a store of a forbidden entry (a writable mapping of T itself)
// through the alias must fault or be refused, never land in the validated table.
void selftest_ptwr_alias(SelfTest& test) {
  Mfn t = new_page_table_frame();
  test.check("pin T as an L1", pv::ops.raw_mmuext(MMUEXT_PIN_L1_TABLE, t.value), 0);
  const uint64_t t_va = mfn_to_va(t);
  Mfn m = table_for(t_va, Level::l1);
  Mfn l2 = table_for(kVirtBase, Level::l2);
  unsigned slot = free_slot(l2, 256, 500);
  test.check("a free slot in the kernel's L2", static_cast<long>(slot != 0), 1);
  test.check("link M there too", set_entry(l2, slot, entry(m, PageTableEntry::kTableFlags)), 0);
  auto* alias = reinterpret_cast<volatile uint64_t*>(kVirtBase + slot * kRegion + (t_va & (kRegion - 1)));
  volatile uint64_t* direct = entries_of(t);

  test.check("a valid entry stored through the direct map", probe_store64(&direct[0], entry(scratch_mfn(), kReadOnly)),
             0);
  test.check("a valid entry stored through the alias", probe_store64(&alias[1], entry(scratch_mfn(), kReadOnly)), 0);
  test.check("an empty mmuext_op", empty_mmuext_op(), 0);
  long faulted = probe_store64(&alias[2], entry(t, kUserWritable));
  test.note("a writable mapping of T stored through the alias (store faulted)", faulted);
  test.check("an empty mmuext_op", empty_mmuext_op(), 0);
  test.check("  it never took effect", static_cast<long>(direct[2]), 0);
  test.check("both valid entries were validated",
             static_cast<long>(PageTableEntry(direct[0]).mfn() == scratch_mfn() &&
                               PageTableEntry(direct[1]).mfn() == scratch_mfn()),
             1);
  check_audit(test);
  test.check("unlink the second link of M", set_entry(l2, slot, 0), 0);
  test.check("flush the TLB (our alias is gone)", pv::ops.raw_mmuext(MMUEXT_TLB_FLUSH_LOCAL, 0), 0);
  test.check("unpin T", pv::ops.raw_mmuext(MMUEXT_UNPIN_TABLE, t.value), 0);
  release_table_frame(t);
}

// Item 5. 128 pinned L2s, each linking the L1 T from all 512 slots: 65,536 links, which a
// 16-bit count read as "known, linked nowhere". One of the L2s is linked at a free kernel
// L3 slot, so the hardware walks T. A store of a mapping of the hypervisor's frame into T
// must be refused (T must not be detached as unreachable while it is walked), and reading
// through T must fault.
void selftest_ptwr_links(SelfTest& test) {
  constexpr unsigned kL2s = 128;
  static Mfn l2s[kL2s];
  Mfn t = new_page_table_frame();
  long pinned = 0;
  for (Mfn& l2 : l2s) {
    Pfn pfn = allocate_zeroed_frame();
    for (unsigned i = 0; i < 512; ++i) pfn_pointer<uint64_t>(pfn)[i] = entry(t, PageTableEntry::kTableFlags);
    l2 = table_frame_at(pfn);
    pinned += pv::ops.raw_mmuext(MMUEXT_PIN_L2_TABLE, l2.value) == 0;
  }
  test.check("pin 128 L2s, each linking T 512 times", pinned, kL2s);
  Mfn l3 = table_for(kVirtBase, Level::l3);
  unsigned slot = free_slot(l3, 1, 509);
  test.check("a free slot in the kernel's L3", static_cast<long>(slot != 0), 1);
  test.check("link one of the L2s there (the hardware walks T)",
             set_entry(l3, slot, entry(l2s[0], PageTableEntry::kTableFlags)), 0);
  auto* through_t = reinterpret_cast<volatile uint64_t*>(kKernelL3Base + (uint64_t{slot} << 30));
  uint64_t value = 0;
  test.check("T maps nothing yet", probe_load64(&through_t[3 * 512], &value), 1);

  volatile uint64_t* direct = entries_of(t);
  long faulted = probe_store64(&direct[3], entry(kHypervisorFrame, kUserReadOnly));
  test.note("a mapping of the hypervisor's frame stored into T (store faulted)", faulted);
  test.check("reading through T faults", probe_load64(&through_t[3 * 512], &value), 1);
  test.check("an empty mmuext_op", empty_mmuext_op(), 0);
  test.check("  the mapping never took effect", static_cast<long>(direct[3]), 0);
  test.check("a valid entry stored into T", probe_store64(&direct[4], entry(scratch_mfn(), kReadOnly)), 0);
  test.check("an empty mmuext_op", empty_mmuext_op(), 0);
  test.check("  was validated", static_cast<long>(PageTableEntry(direct[4]).mfn() == scratch_mfn()), 1);
  check_audit(test);

  test.check("unlink the L2", set_entry(l3, slot, 0), 0);
  test.check("flush the TLB", pv::ops.raw_mmuext(MMUEXT_TLB_FLUSH_LOCAL, 0), 0);
  long unpinned = 0;
  for (Mfn l2 : l2s) unpinned += pv::ops.raw_mmuext(MMUEXT_UNPIN_TABLE, l2.value) == 0;
  test.check("unpin the 128 L2s", unpinned, kL2s);
  for (Mfn l2 : l2s) release_table_frame(l2);
  release_table_frame(t);
}

namespace {
struct Flushes {
  bool counted = false;     // our hypervisor's counters are readable (dom0 on ours)
  uint64_t flushes = 0;     // tlb_flushes
  uint64_t reattached = 0;  // ptwr_rehooks: tables reattached (the write was detached)
};
Flushes read_flushes() {
  pvhv_counters counters{};
  if (read_pvhv_counters(counters) != 0) return Flushes{};
  return Flushes{true, counters.flushes, counters.rehooks};
}

// A store into the pinned, unlinked L1 `table`, then an empty mmuext_op; how many TLB
// flushes the store cost, and whether it was detached (-1: no counters here).
long flushes_of_store(volatile uint64_t* slot, uint64_t value, bool& detached) {
  Flushes before = read_flushes();
  probe_store64(slot, value);
  Flushes after_store = read_flushes();
  empty_mmuext_op();
  Flushes after_reattach = read_flushes();
  detached = after_reattach.reattached > after_store.reattached;
  if (!before.counted) return -1;
  return static_cast<long>(after_store.flushes - before.flushes);
}
}  // namespace

// Item 10. T: an L1, pinned. A store into it while nothing links it is an inactive detach,
// which needs no flush. Linked at a free kernel L2 slot, walked, and unlinked again with no
// flush, it may still be walked through the paging-structure caches: the next inactive
// detach must flush first. Under TCG those caches cannot be seen, so the check is on our
// counters (dom0 on our hypervisor); the entries must be validated everywhere.
void selftest_ptwr_unlink(SelfTest& test) {
  Mfn t = new_page_table_frame();
  test.check("pin T as an L1", pv::ops.raw_mmuext(MMUEXT_PIN_L1_TABLE, t.value), 0);
  volatile uint64_t* direct = entries_of(t);
  const uint64_t data = entry(scratch_mfn(), kReadOnly);
  bool detached = false;
  // Two warm-up batches: whatever the slot's last batch was, the next detach is not declined.
  flushes_of_store(&direct[0], data, detached);
  flushes_of_store(&direct[1], data, detached);
  test.check("flush the TLB", pv::ops.raw_mmuext(MMUEXT_TLB_FLUSH_LOCAL, 0), 0);
  long flushes = flushes_of_store(&direct[2], data, detached);
  if (flushes >= 0 && detached) test.check("an inactive detach with nothing unlinked does not flush", flushes, 0);

  Mfn l2 = table_for(kVirtBase, Level::l2);
  unsigned slot = free_slot(l2, 256, 500);
  test.check("a free slot in the kernel's L2", static_cast<long>(slot != 0), 1);
  test.check("link T there", set_entry(l2, slot, entry(t, PageTableEntry::kTableFlags)), 0);
  uint64_t value = 0;
  test.check("read through T", probe_load64(reinterpret_cast<volatile uint64_t*>(kVirtBase + slot * kRegion), &value),
             0);
  test.check("unlink T, no flush", set_entry(l2, slot, 0), 0);
  flushes = flushes_of_store(&direct[3], data, detached);
  if (flushes >= 0 && detached)
    test.check("the inactive detach after that unlink flushed the TLB", static_cast<long>(flushes >= 1), 1);
  else
    test.note("(no counters, or the store was emulated: no detach to check)", flushes);
  long validated = 0;
  for (unsigned i = 0; i < 4; ++i) validated += PageTableEntry(direct[i]).mfn() == scratch_mfn();
  test.check("every entry stored was validated", validated, 4);
  check_audit(test);
  test.check("unpin T", pv::ops.raw_mmuext(MMUEXT_UNPIN_TABLE, t.value), 0);
  release_table_frame(t);
}
}  // namespace kernel
