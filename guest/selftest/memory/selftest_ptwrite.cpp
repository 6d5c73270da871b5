// selftest=ptwrite: direct (plain-store) writes to page tables, whichever way the hypervisor
// handles them (emulation, or writable pagetables). A write that would break isolation must
// never take effect; an instruction the hypervisor cannot emulate must come back as a page
// fault the kernel can handle; tearing down an address space while one of its tables is
// detached must leave every count right (the hypervisor's audit checks that at the end).
#include "arch/xen.h"
#include "kernel/memory/direct_map.h"
#include "kernel/memory/page_allocator.h"
#include "kernel/memory/physical_memory.h"
#include "arch/probe.h"
#include "selftest/memory/memory_selftests.h"

namespace kernel {
namespace {
alignas(4096) uint8_t scratch_page[4096];
constexpr uint64_t kReadOnly = PageTableEntry::kPresent | PageTableEntry::kAccessed;
constexpr uint64_t kWritable = kReadOnly | PageTableEntry::kWritable | PageTableEntry::kDirty;

pv::PageTableSlot slot_of(Level level) {
  pv::PageTableSlot slot;
  walk(kernel_l4(), reinterpret_cast<uint64_t>(scratch_page), level, slot);
  return slot;
}

// Any MMU hypercall makes the hypervisor reattach detached tables first: after it, what the
// table holds is what was validated.
void settle() { pv::ops.raw_mmuext(MMUEXT_TLB_FLUSH_LOCAL, 0); }

void check_refused_store(SelfTest& test, const char* what, const pv::PageTableSlot& slot, uint64_t value) {
  uint64_t before = read_entry(slot).raw();
  long faulted = probe_store64(slot.kernel_va, value);
  settle();
  test.note(what, faulted);  // emulation faults the store; writable pagetables refuse it later
  test.check("  the entry is unchanged", static_cast<long>(read_entry(slot).raw() == before), 1);
}

void check_valid_store(SelfTest& test, const pv::PageTableSlot& slot) {
  uint64_t before = read_entry(slot).raw();
  uint64_t read_only = PageTableEntry::make(PageTableEntry(before).mfn(), kReadOnly).raw();
  test.check("a valid entry written with a plain store takes effect", probe_store64(slot.kernel_va, read_only), 0);
  settle();
  PageTableEntry kept = read_entry(slot);
  test.check("  and is kept after validation",
             static_cast<long>(kept.mfn().value == PageTableEntry(before).mfn().value && !kept.writable()), 1);
  test.check("restoring it with a plain store", probe_store64(slot.kernel_va, before), 0);
  settle();
}

// Writes to an L2 are emulated in every mode: the instruction forms the emulator refuses.
void check_unemulable(SelfTest& test) {
  pv::PageTableSlot l2 = slot_of(Level::l2);
  uint64_t value = read_entry(l2).raw();
  auto* misaligned = reinterpret_cast<volatile uint64_t*>(reinterpret_cast<uint64_t>(l2.kernel_va) + 4);
  test.check("a store straddling two entries faults", probe_store64(misaligned, value >> 32), 1);
  test.check("rep stosq on a page table faults", probe_rep_stosq(l2.kernel_va, value, 1), 1);
  test.check("movnti on a page table faults", probe_movnti(l2.kernel_va, value), 1);
  test.check("  the entry is unchanged", static_cast<long>(read_entry(l2).raw() == value), 1);
}

// A whole user address space (L4 -> L3 -> L2 -> L1) made current, one of its tables written
// directly (detached, unhooked, under writable pagetables), then destroyed at once.
void check_teardown_while_detached(SelfTest& test) {
  Mfn tables[4];
  for (Mfn& table : tables) table = new_page_table_frame();
  Mfn data = pfn_to_mfn(allocate_zeroed_frame());
  auto raw_set = [](Mfn table, unsigned index, uint64_t value) {
    return pv::ops.raw_mmu_update((table.value << 12) + index * 8, value);
  };
  long rc = raw_set(tables[3], 0, PageTableEntry::make(data, kReadOnly | PageTableEntry::kUser).raw());
  rc |= raw_set(tables[2], 0, PageTableEntry::make(tables[3], PageTableEntry::kTableFlags).raw());
  rc |= raw_set(tables[1], 0, PageTableEntry::make(tables[2], PageTableEntry::kTableFlags).raw());
  rc |= raw_set(tables[0], 0, PageTableEntry::make(tables[1], PageTableEntry::kTableFlags).raw());
  test.check("build a user address space", rc, 0);
  test.check("pin it", pv::ops.raw_mmuext(MMUEXT_PIN_L4_TABLE, tables[0].value), 0);
  test.check("make it the user base", pv::ops.raw_mmuext(MMUEXT_NEW_USER_BASEPTR, tables[0].value), 0);
  auto* l1 = reinterpret_cast<volatile uint64_t*>(mfn_to_va(tables[3]));
  // Under writable pagetables this store lands in the detached table and is refused when
  // the table is re-validated; under emulation it faults. Either way it never takes effect.
  probe_store64(&l1[2], PageTableEntry::make(tables[3], kWritable | PageTableEntry::kUser).raw());
  settle();
  test.check("a writable self-mapping written into its L1 never takes effect", static_cast<long>(l1[2] == 0), 1);
  test.check("write its L1 directly",
             probe_store64(&l1[1], PageTableEntry::make(data, kWritable | PageTableEntry::kUser).raw()), 0);
  test.check("drop it as user base", pv::ops.raw_mmuext(MMUEXT_NEW_USER_BASEPTR, 0), 0);
  test.check("unpin it (tears the tree down)", pv::ops.raw_mmuext(MMUEXT_UNPIN_TABLE, tables[0].value), 0);
  test.check("  the direct write survived validation",
             static_cast<long>(PageTableEntry(l1[1]).mfn().value == data.value), 1);
}
}  // namespace

void selftest_ptwrite(SelfTest& test) {
  pv::PageTableSlot slot = slot_of(Level::l1);
  check_valid_store(test, slot);
  Mfn own_table = read_entry(slot_of(Level::l2)).mfn();
  check_refused_store(test, "a writable mapping of an own page table (store faulted)", slot,
                      PageTableEntry::make(own_table, kWritable).raw());
  check_refused_store(test, "address bits beyond the physical width (store faulted)", slot,
                      PageTableEntry(read_entry(slot).raw() | (1ull << 45)).raw());
  check_unemulable(test);
  check_teardown_while_detached(test);
}
}  // namespace kernel
