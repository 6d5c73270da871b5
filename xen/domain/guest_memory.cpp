#include "domain/guest_memory.h"
#include "abi/xen_abi.h"
#include <xen/xen.h>
#include "domain/domain.h"
#include "domain/domain_mmu.h"
#include "domain/guest_access.h"

namespace guest_memory {
bool copy_to(const Vcpu& vcpu, uint64_t guest_va, const void* from, size_t length) {
  if (!detail::reachable(vcpu, guest_va, length)) return false;
  // A translation cached before a frame changed type (a writable mapping of what is now a
  // page table) must not carry this write.
  domain_mmu::flush_after_type_change();
  return guest_access_copy(reinterpret_cast<void*>(guest_va), from, length) == 0;
}
}  // namespace guest_memory
