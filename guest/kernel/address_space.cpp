#include "kernel/address_space.h"

#include "kernel/direct_map.h"
#include "kernel/panic.h"
#include "kernel/physical_memory.h"

namespace kernel {
namespace {

constexpr uint64_t kUserDataFlags =
    PageTableEntry::kPresent | PageTableEntry::kUser | PageTableEntry::kAccessed;

void must(long rc, const char* what, uint64_t va) {
  if (rc < 0) panic("%s for %lx: %ld", what, va, rc);
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
  if (entry.present()) return entry.mfn();
  Mfn child = new_page_table_frame();
  auto link = PageTableEntry::make(child, PageTableEntry::kTableFlags);
  must(pv::ops.set_entry(slot, link), "linking page table", va);
  if (parent_level == Level::l4) {
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
