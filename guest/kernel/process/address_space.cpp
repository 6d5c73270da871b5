#include "kernel/process/address_space.h"

#include "kernel/memory/direct_map.h"
#include "kernel/memory/page_allocator.h"
#include "kernel/process/copy_on_write.h"
#include "kernel/console/panic.h"
#include "kernel/memory/physical_memory.h"
#include "kernel/measurement/trace_capture.h"

namespace kernel {
namespace {

constexpr uint64_t kUserDataFlags = PageTableEntry::kPresent | PageTableEntry::kUser | PageTableEntry::kAccessed;

void must(long rc, const char* what, uint64_t va) {
  if (rc < 0) panic("%s for %lx: %ld", what, va, rc);
}

const AddressSpace* active_space;  // whose user slots the kernel L4 mirrors

constexpr unsigned kUserL4Slots = 256;  // the lower canonical half
constexpr unsigned kEntries = 512;

const volatile uint64_t* table_entries(Mfn table) {
  return reinterpret_cast<const volatile uint64_t*>(mfn_to_va(table));
}

uint64_t level_span(Level level) { return 1ull << (12 + 9 * (static_cast<int>(level) - 1)); }

// A zeroed table linked into `slot` (whose table is already typed by the hypervisor), so the
// new table is typed and validated (empty) when linked.
Mfn link_new_table(const pv::PageTableSlot& slot, uint64_t va) {
  Mfn table = new_page_table_frame();
  must(pv::ops.set_entry(slot, PageTableEntry::make(table, PageTableEntry::kTableFlags)), "linking child table", va);
  return table;
}

// copy_level's last level: every present entry is shared, write-protected in the parent where
// it was writable and mapped read-only in the child. The slots are found from each table's
// first (one lookup of the frame's address per table, not two per entry).
void copy_l1(Mfn parent_table, Mfn child_table, uint64_t base) {
  const pv::PageTableSlot parent_first = table_slot(parent_table, 0, Level::l1);
  const pv::PageTableSlot child_first = table_slot(child_table, 0, Level::l1);
  for (unsigned i = 0; i < kEntries; ++i) {
    PageTableEntry entry(parent_first.kernel_va[i]);
    if (!entry.present()) continue;
    const uint64_t va = base + i * level_span(Level::l1);
    page_allocator.share(mfn_to_pfn(entry.mfn()));
    PageTableEntry shared = lib::shared_after_fork(entry);
    if (shared.raw() != entry.raw()) must(pv::ops.set_entry(slot_at(parent_first, i), shared), "write-protecting", va);
    must(pv::ops.set_entry(slot_at(child_first, i), shared), "sharing", va);
    trace_capture::poll();  // a dirty parent's fork writes tens of thousands of entries
  }
}

void copy_level(Mfn parent_table, Mfn child_table, Level level, uint64_t base) {
  if (level == Level::l1) return copy_l1(parent_table, child_table, base);
  const volatile uint64_t* entries = table_entries(parent_table);
  unsigned count = level == Level::l4 ? kUserL4Slots : kEntries;
  for (unsigned i = 0; i < count; ++i) {
    PageTableEntry entry(entries[i]);
    if (entry.none()) continue;
    uint64_t va = base + i * level_span(level);
    Mfn child_next = link_new_table(table_slot(child_table, i, level), va);
    copy_level(entry.mfn(), child_next, static_cast<Level>(static_cast<int>(level) - 1), va);
  }
}

// Calls visit(table, level) for every table below the user half of `l4` (children first),
// then for the L4 itself; for L1 tables also release(frame) for every mapped frame.
template <typename Visit>
void for_each_table(Mfn table, Level level, Visit&& visit) {
  if (level != Level::l1) {
    const volatile uint64_t* entries = table_entries(table);
    unsigned count = level == Level::l4 ? kUserL4Slots : kEntries;
    for (unsigned i = 0; i < count; ++i) {
      PageTableEntry entry(entries[i]);
      if (!entry.none()) {
        for_each_table(entry.mfn(), static_cast<Level>(static_cast<int>(level) - 1), visit);
      }
    }
  }
  visit(table, level);
}

}  // namespace

void AddressSpace::create() {
  l4_ = new_page_table_frame();
  must(pv::ops.pin(Level::l4, l4_), "pinning user L4", 0);
}

// The table below `parent` for va, created (and linked) if missing.
Mfn AddressSpace::child_table(Mfn parent, uint64_t va, Level parent_level) {
  auto slot = table_slot(parent, lib::table_index(va, parent_level), parent_level);
  pv::ops.flush();
  PageTableEntry entry = read_entry(slot);
  if (!entry.none()) return entry.mfn();
  Mfn child = new_page_table_frame();
  auto link = PageTableEntry::make(child, PageTableEntry::kTableFlags);
  must(pv::ops.set_entry(slot, link), "linking page table", va);
  if (parent_level == Level::l4 && active_space == this) {
    // Mirror into the kernel L4: same L3, so both views always agree below this slot.
    auto kernel_slot = table_slot(kernel_l4(), lib::table_index(va, Level::l4), Level::l4);
    must(pv::ops.set_entry(kernel_slot, link), "mirroring user L4 slot", va);
  }
  return child;
}

bool AddressSpace::map(uint64_t va, Pfn frame, bool writable) {
  if (va >= kUserLimit) return false;
  Mfn l3 = child_table(l4_, va, Level::l4);
  Mfn l2 = child_table(l3, va, Level::l3);
  Mfn l1 = child_table(l2, va, Level::l2);
  uint64_t flags = kUserDataFlags;
  if (writable) flags |= PageTableEntry::kWritable | PageTableEntry::kDirty;
  auto slot = table_slot(l1, lib::table_index(va, Level::l1), Level::l1);
  must(pv::ops.set_entry(slot, PageTableEntry::make(pfn_to_mfn(frame), flags)), "mapping", va);
  return true;
}

bool AddressSpace::leaf_slot(uint64_t va, pv::PageTableSlot& slot) const {
  return va < kUserLimit && walk(l4_, va, Level::l1, slot);
}

void AddressSpace::copy_into(AddressSpace& child) const {
  pv::LazyMmu lazy;
  copy_level(l4_, child.l4_, Level::l4, 0);
  // Our own entries lost Writable: no stale writable translation may survive.
  must(pv::ops.flush_tlb(), "flushing the TLB after fork", 0);
}

void AddressSpace::activate() const {
  active_space = this;
  pv::LazyMmu lazy;
  const volatile uint64_t* mine = table_entries(l4_);
  const volatile uint64_t* kernel = table_entries(kernel_l4());
  for (unsigned i = 0; i < kUserL4Slots; ++i) {
    if (kernel[i] == mine[i]) continue;
    must(pv::ops.set_entry(table_slot(kernel_l4(), i, Level::l4), PageTableEntry(mine[i])), "mirroring user L4 slot",
         uint64_t{i} << 39);
  }
  must(pv::ops.set_user_base(l4_), "new_user_baseptr", 0);
  must(pv::ops.flush_tlb(), "flushing the TLB on switch", 0);
}

void AddressSpace::destroy() {
  constexpr uint64_t kWritableData =
      PageTableEntry::kPresent | PageTableEntry::kWritable | PageTableEntry::kAccessed | PageTableEntry::kDirty;
  {
    // Unpinning drops the last type reference of the tree: the hypervisor lets go of every
    // table below, and each can be mapped writable again for reuse as an ordinary frame.
    pv::LazyMmu lazy;
    must(pv::ops.unpin(l4_), "unpinning user L4", 0);
    for_each_table(l4_, Level::l4, [](Mfn table, Level) {
      must(pv::ops.set_kernel_mapping(mfn_to_va(table), PageTableEntry::make(table, kWritableData)),
           "remapping a page table writable", mfn_to_va(table));
    });
  }
  for_each_table(l4_, Level::l4, [](Mfn table, Level level) {
    if (level == Level::l1) {
      const volatile uint64_t* entries = table_entries(table);
      for (unsigned i = 0; i < kEntries; ++i) {
        PageTableEntry entry(entries[i]);
        if (entry.present()) page_allocator.free(mfn_to_pfn(entry.mfn()));
      }
    }
  });
  // Tables last: a table is read while its children are visited.
  for_each_table(l4_, Level::l4, [](Mfn table, Level) { page_allocator.free(mfn_to_pfn(table)); });
  l4_ = Mfn{0};
  if (active_space == this) active_space = nullptr;
}

PageTableEntry AddressSpace::lookup(uint64_t va) const {
  pv::PageTableSlot slot;
  if (va >= kUserLimit || !walk(l4_, va, Level::l1, slot)) return PageTableEntry();
  return read_entry(slot);
}

bool AddressSpace::unmap(uint64_t va, Pfn& frame) {
  pv::PageTableSlot slot;
  if (va >= kUserLimit || !walk(l4_, va, Level::l1, slot)) return false;
  PageTableEntry entry = read_entry(slot);
  if (!entry.present()) return false;
  must(pv::ops.set_entry(slot, PageTableEntry()), "unmapping", va);
  must(pv::ops.invalidate_page(va), "invlpg", va);
  frame = mfn_to_pfn(entry.mfn());
  return true;
}

}  // namespace kernel
