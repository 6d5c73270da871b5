// Copies between the hypervisor and the running vCPU's virtual memory, directly on its own
// page tables (pv/guest_access). Bad guest pointers (unmapped, read-only for a write, in the
// hypervisor's range, non-canonical, wrapping, or of a vCPU that is not running) give false,
// which callers turn into -EFAULT.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "domain/domain.h"
#include "pv/guest_access.h"

namespace guest_memory {
namespace detail {
constexpr uint64_t lower_half_end = uint64_t{1} << 47;

// Xen's __addr_ok over the whole range: the lower canonical half, or the upper half above the
// hypervisor's slots. Never the non-canonical hole, the hypervisor's own range (its read-only
// M2P included) or a range that wraps.
constexpr bool guest_range(uint64_t va, size_t length) {
  uint64_t end = va + length;
  if (end < va) return false;
  return end <= lower_half_end || va >= HYPERVISOR_VIRT_END;
}

// The accesses run on the current address space: only the running vCPU's memory is reachable.
inline bool reachable(const Vcpu& vcpu, uint64_t va, size_t length) {
  return &vcpu == domains::current() && guest_range(va, length);
}
}  // namespace detail

// Inline: every hypercall argument in memory (each mmu_update request) is read through here.
inline bool copy_from(const Vcpu& vcpu, void* to, uint64_t guest_va, size_t length) {
  if (!detail::reachable(vcpu, guest_va, length)) return false;
  return guest_access_copy(to, reinterpret_cast<const void*>(guest_va), length) == 0;
}
bool copy_to(const Vcpu& vcpu, uint64_t guest_va, const void* from, size_t length);

template <typename T>
bool read(const Vcpu& vcpu, uint64_t guest_va, T& value) { return copy_from(vcpu, &value, guest_va, sizeof(T)); }
template <typename T>
bool write(const Vcpu& vcpu, uint64_t guest_va, const T& value) { return copy_to(vcpu, guest_va, &value, sizeof(T)); }
}  // namespace guest_memory
