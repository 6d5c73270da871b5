#pragma once
// Frame-number translation for a PV guest, as the domain builder's contract defines it:
//  - pseudo-physical -> machine through the p2m list the builder gave us (start_info),
//  - machine -> pseudo-physical through the hypervisor's read-only M2P table,
//  - pseudo-physical frame N is mapped at VIRT_BASE + N*4096 (the kernel's direct map:
//    the builder's initial mappings, extended over all memory by kernel/memory/direct_map.cpp).
// Plain arithmetic over boot_info, so the console can use it before anything else is up.
#include "arch/xen.h"
#include "kernel/boot/boot_info.h"
#include "lib/page_table_entry.h"

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

}  // namespace kernel
