// The arithmetic of Xen 4.17's XENMEM_increase_reservation, decrease_reservation and
// populate_physmap (xen/common/memory.c), pure and unit-tested on the host
// (tests/unit/memory_reservation_rules_test.cpp):
//  - the command word: the sub-op in bits 5:0, the extent to start from above (a preempted
//    call continues with op | done << 6);
//  - what makes Xen do nothing and answer the start extent: nr_extents too large to encode a
//    continuation, a start at or beyond nr_extents, an extent list outside the guest's
//    address range, an extent order beyond the caller's maximum;
//  - whether a domain may take 2^order more pages (assign_pages: tot_pages + n <= max_pages).
#pragma once
#include <stdint.h>

namespace memory {
constexpr unsigned extent_shift = 6;  // Xen's MEMOP_EXTENT_SHIFT
constexpr uint64_t command_mask = (1u << extent_shift) - 1;

struct MemoryCommand {
  unsigned op = 0;
  uint64_t start_extent = 0;
};
constexpr MemoryCommand decode_command(uint64_t cmd) {
  return MemoryCommand{unsigned(cmd & command_mask), cmd >> extent_shift};
}
constexpr uint64_t continuation_command(unsigned op, uint64_t done) { return op | (done << extent_shift); }

// Xen's max_order for the caller, as x86 configures it: CONFIG_DOMU_MAX_ORDER 9 for a domU,
// CONFIG_CTLDOM_MAX_ORDER (= PAGEALLOC_MAX_ORDER) 18 for the control domain.
constexpr unsigned max_extent_order(bool control_domain) { return control_domain ? 18 : 9; }

// The checks before any extent is touched; true when the call goes ahead.
struct ReservationRequest {
  uint64_t extent_list = 0;  // guest address of the xen_pfn_t array (0: none, for increase)
  uint64_t nr_extents = 0;   // 32 bits in the ABI
  unsigned extent_order = 0;
  uint64_t start_extent = 0;
};
bool continuation_encodable(uint64_t nr_extents);
// guest_handle_subrange_okay: the address of entry `first` is below 2^47 or above the
// hypervisor's range (Xen checks only where the range starts).
bool extent_list_addressable(uint64_t extent_list, uint64_t first);
bool reservation_proceeds(const ReservationRequest& request, bool control_domain, bool list_required);

// assign_pages: the domain may hold 2^order more pages.
constexpr bool fits_reservation(uint64_t tot_pages, uint64_t max_pages, unsigned order) {
  uint64_t n = uint64_t(1) << order;
  return tot_pages + n >= tot_pages && tot_pages + n <= max_pages;
}
}  // namespace memory
