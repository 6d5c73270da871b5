#include "memory/reservation_rules.h"

namespace memory {
namespace {
constexpr uint64_t lower_half_end = 1ull << 47;
constexpr uint64_t hypervisor_virt_end = 0xffff880000000000ull;
}  // namespace

bool continuation_encodable(uint64_t nr_extents) { return nr_extents <= (0xffffffffull >> extent_shift); }

bool extent_list_addressable(uint64_t extent_list, uint64_t first) {
  uint64_t address = extent_list + first * 8;  // first < 2^26: no wrap
  return address < lower_half_end || address >= hypervisor_virt_end;
}

bool reservation_proceeds(const ReservationRequest& request, bool control_domain, bool list_required) {
  if (!continuation_encodable(request.nr_extents) || request.start_extent >= request.nr_extents) return false;
  if ((list_required || request.extent_list) && !extent_list_addressable(request.extent_list, request.start_extent))
    return false;
  return request.extent_order <= max_extent_order(control_domain);
}
}  // namespace memory
