#include "pv/guest_memory.h"
#include "mm/xen_abi.h"
#include <xen/xen.h>
#include "domain/domain.h"
#include "domain/domain_mmu.h"
#include "pv/guest_access.h"

namespace guest_memory {
namespace {
constexpr uint64_t lower_half_end = uint64_t{1} << 47;

// Xen's __addr_ok over the whole range: the lower canonical half, or the upper half above the
// hypervisor's slots. Never the non-canonical hole, the hypervisor's own range (its read-only
// M2P included) or a range that wraps.
bool guest_range(uint64_t va, size_t length) {
  uint64_t end = va + length;
  if (end < va) return false;
  return end <= lower_half_end || va >= HYPERVISOR_VIRT_END;
}

// The accesses run on the current address space: only the running vCPU's memory is reachable.
bool reachable(const Vcpu& vcpu, uint64_t va, size_t length) {
  return &vcpu == domains::current() && guest_range(va, length);
}
}  // namespace

bool copy_from(const Vcpu& vcpu, void* to, uint64_t guest_va, size_t length) {
  if (!reachable(vcpu, guest_va, length)) return false;
  return guest_access_copy(to, reinterpret_cast<const void*>(guest_va), length) == 0;
}

bool copy_to(const Vcpu& vcpu, uint64_t guest_va, const void* from, size_t length) {
  if (!reachable(vcpu, guest_va, length)) return false;
  // A translation cached before a frame changed type (a writable mapping of what is now a
  // page table) must not carry this write.
  domain_mmu::flush_after_type_change();
  return guest_access_copy(reinterpret_cast<void*>(guest_va), from, length) == 0;
}
}  // namespace guest_memory
