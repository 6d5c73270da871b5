#pragma once
#include "mm/page_table_entry.h"

namespace mm {

// L4 slots 256..271 (0xffff800000000000 - 0xffff87ffffffffff) belong to the hypervisor in
// every guest address space, as in Xen (ROOT_PAGETABLE_FIRST/LAST_XEN_SLOT). Slot 256 holds
// the read-only machine-to-phys table that guests read at HYPERVISOR_VIRT_START.
inline constexpr unsigned kFirstHypervisorSlot = 256;
inline constexpr unsigned kLastHypervisorSlot = 271;
inline constexpr unsigned kHypervisorSlotCount = kLastHypervisorSlot - kFirstHypervisorSlot + 1;
inline constexpr unsigned kReadOnlyM2pSlot = 256;

constexpr bool is_hypervisor_l4_slot(unsigned index) {
  return index >= kFirstHypervisorSlot && index <= kLastHypervisorSlot;
}

// The entries the hypervisor installs in those slots of every validated guest L4. They map
// hypervisor frames and hold no references in the frame table.
struct HypervisorL4Slots {
  PageTableEntry entries[kHypervisorSlotCount] = {};

  constexpr PageTableEntry slot(unsigned index) const { return entries[index - kFirstHypervisorSlot]; }
};

}  // namespace mm
