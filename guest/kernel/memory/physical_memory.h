#pragma once
// Page-table slot lookup for a PV guest: where an entry is for the hypervisor and for the kernel,
// and the walk from an L4 down to the slot that maps an address. With the frame-number
// translation it builds on (kernel/boot/frames.h), this is what the kernel means by physical
// memory.
#include "kernel/boot/frames.h"
#include "lib/page_table_entry.h"
#include "pv-kernel-patches/pv_ops.h"

namespace kernel {

// The slot `index` of the table in frame `table`, which must be in the direct map. Inline: a
// fork computes two per entry it copies.
inline pv::PageTableSlot table_slot(Mfn table, unsigned index, Level level) {
  uint64_t offset = uint64_t{index} * sizeof(uint64_t);
  return pv::PageTableSlot{table.machine_address() + offset,
                           reinterpret_cast<volatile uint64_t*>(mfn_to_va(table) + offset), level};
}
// The slot `index` entries after `first` in the same table.
inline pv::PageTableSlot slot_at(const pv::PageTableSlot& first, unsigned index) {
  return pv::PageTableSlot{first.machine_address + uint64_t{index} * sizeof(uint64_t), first.kernel_va + index,
                           first.level};
}
inline PageTableEntry read_entry(const pv::PageTableSlot& slot) { return PageTableEntry(*slot.kernel_va); }

// Walks from the L4 in frame `root` down to the slot of `level` that maps va. False if an
// upper-level entry is not present (or maps a large page).
bool walk(Mfn root, uint64_t va, Level level, pv::PageTableSlot& slot);

}  // namespace kernel
