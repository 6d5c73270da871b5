// Copies between the hypervisor and the running vCPU's virtual memory, directly on its own
// page tables (domain/guest_access). Bad guest pointers (unmapped, read-only for a write, in the
// hypervisor's range, non-canonical, wrapping, or of a vCPU that is not running) give false,
// which callers turn into -EFAULT.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "domain/domain.h"
#include "domain/guest_access.h"

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

// Whether every byte of [guest_va, guest_va + length) is the running vCPU's to read: checked
// once for an array whose elements are then read with read_reachable.
inline bool reachable(const Vcpu& vcpu, uint64_t guest_va, uint64_t length) {
  return detail::reachable(vcpu, guest_va, length);
}

// read() of a value the caller found reachable (inside a range it checked).
template <typename T>
[[gnu::always_inline]] inline bool read_reachable(uint64_t guest_va, T& value) {
  constexpr size_t words = sizeof(T) / sizeof(uint64_t);
  if constexpr (sizeof(T) % sizeof(uint64_t) == 0 && words <= 4) {
    uint64_t loaded[words];
    const auto* from = reinterpret_cast<const uint64_t*>(guest_va);
    for (size_t i = 0; i < words; ++i)
      if (!guest_access::load_word(from + i, loaded[i])) return false;
    __builtin_memcpy(&value, loaded, sizeof(T));
    return true;
  } else {
    return guest_access_copy(&value, reinterpret_cast<const void*>(guest_va), sizeof(T)) == 0;
  }
}

// A value of whole words (an mmu_update request, a pointer) is loaded word by word inline
// (guest_access::load_word); any other through guest_access_copy.
template <typename T>
[[gnu::always_inline]] inline bool read(const Vcpu& vcpu, uint64_t guest_va, T& value) {
  return detail::reachable(vcpu, guest_va, sizeof(T)) && read_reachable(guest_va, value);
}
template <typename T>
bool write(const Vcpu& vcpu, uint64_t guest_va, const T& value) {
  return copy_to(vcpu, guest_va, &value, sizeof(T));
}
}  // namespace guest_memory
