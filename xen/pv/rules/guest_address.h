// Pure: Xen's __addr_ok for a 64-bit PV guest, the check its hypercalls make of a guest
// address they keep (SET_LDT's base, a debug register, a registered area's start): the lower
// canonical half, or at or above the end of the hypervisor's range (HYPERVISOR_VIRT_END). Only
// the address itself is checked, as Xen's access_ok: what lies beyond is checked when used.
#pragma once
#include <stdint.h>

namespace guest_address {
inline constexpr uint64_t kLowerHalfEnd = 1ull << 47;
inline constexpr uint64_t kHypervisorEnd = 0xffff880000000000ull;  // HYPERVISOR_VIRT_END
constexpr bool addr_ok(uint64_t address) { return address < kLowerHalfEnd || address >= kHypervisorEnd; }
}  // namespace guest_address
