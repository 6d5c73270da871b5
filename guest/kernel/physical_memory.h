#pragma once
// Frame-number translation and page-table slot lookup for a PV guest:
//  - pseudo-physical -> machine through the p2m list the builder gave us (start_info),
//  - machine -> pseudo-physical through the hypervisor's read-only M2P table,
//  - pseudo-physical frame N is mapped at VIRT_BASE + N*4096 (the kernel's direct map:
//    the builder's initial mappings, extended over all memory by direct_map.cpp).
#include "arch/xen.h"
#include "kernel/boot_info.h"
#include "lib/page_table_entry.h"
#include "pv-kernel-patches/pv_ops.h"

namespace kernel {

using lib::Level;
using lib::Mfn;
using lib::PageTableEntry;
using lib::Pfn;

inline Mfn pfn_to_mfn(Pfn pfn) { return Mfn{boot_info.p2m[pfn.value]}; }
inline Pfn mfn_to_pfn(Mfn mfn) { return Pfn{machine_to_phys_mapping[mfn.value]}; }
inline uint64_t pfn_to_va(Pfn pfn) { return kVirtBase + (pfn.value << 12); }
inline Pfn va_to_pfn(uint64_t va) { return Pfn{(va - kVirtBase) >> 12}; }
inline Mfn va_to_mfn(uint64_t va) { return pfn_to_mfn(va_to_pfn(va)); }
inline uint64_t mfn_to_va(Mfn mfn) { return pfn_to_va(mfn_to_pfn(mfn)); }
template <typename T>
inline T* pfn_pointer(Pfn pfn) {
  return reinterpret_cast<T*>(pfn_to_va(pfn));
}

inline Mfn kernel_l4() { return va_to_mfn(boot_info.kernel_l4_va); }

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
