#include "domain/vcpu_info_area.h"
#include "abi/xen_abi.h"
#include <xen/vcpu.h>
#include "domain/domain.h"
#include "domain/domain_mmu.h"
#include "domain/shared_info.h"
#include "memory/boot_memory.h"
#include "memory/machine.h"
#include "mm/guest_frame_write_ref.h"
#include "domain/guest_memory.h"

namespace vcpu_info_area {
namespace {
constexpr uint64_t page = 4096;
}  // namespace

long register_info(Vcpu& caller, Vcpu& vcpu, uint64_t argument) {
  vcpu_register_vcpu_info request;
  if (!guest_memory::read(caller, argument, request)) return -XEN_EFAULT;
  // Xen's map_vcpu_info: room for the whole vcpu_info, on its alignment, else -ENXIO.
  if (request.offset > page - sizeof(vcpu_info_t) || request.offset % alignof(vcpu_info_t) != 0) return -XEN_ENXIO;
  if (vcpu.registered_info) return -XEN_EINVAL;  // once only, as Xen
  Domain& domain = *vcpu.domain;
  const uint64_t mfn = request.mfn;
  if (domain_mmu::take_write_hold(domain, vcpu.registered_info_frame, mfn) != 0) return -XEN_EINVAL;
  auto* moved = reinterpret_cast<vcpu_info_t*>(machine::to_virtual<uint8_t>(mfn * page) + request.offset);
  __builtin_memcpy(moved, vcpu.info(), sizeof(vcpu_info_t));
  vcpu.registered_info = moved;
  // Everything pending: the guest gets a spurious upcall, but no event is lost in the move.
  __atomic_store_n(&moved->evtchn_upcall_pending, 1, __ATOMIC_RELEASE);
  __atomic_store_n(&moved->evtchn_pending_sel, ~xen_ulong_t{0}, __ATOMIC_RELEASE);
  shared_info_page::update_time(vcpu);  // Xen's force_update_vcpu_system_time
  return 0;
}

void release(Vcpu& vcpu) {
  if (!vcpu.registered_info) return;
  vcpu.registered_info = nullptr;
  domain_mmu::release_write_hold(vcpu.registered_info_frame);
}
}  // namespace vcpu_info_area
