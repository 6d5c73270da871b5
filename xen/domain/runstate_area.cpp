#include "domain/runstate_area.h"
#include "abi/xen_abi.h"
#include <xen/vcpu.h>
#include "arch/x86/cpu/canonical.h"
#include "domain/domain.h"
#include "domain/guest_memory.h"

namespace runstate_area {
namespace {
// Xen's guest_handle_okay for a 64-bit PV guest: canonical and outside the hypervisor's hole.
bool guest_range(uint64_t address, uint64_t length) {
  const uint64_t last = address + length - 1;
  if (last < address || !cpu::canonical(address) || !cpu::canonical(last)) return false;
  return last < HYPERVISOR_VIRT_START || address >= HYPERVISOR_VIRT_END;
}

// `vcpu`'s runstate into its area, through the address space of `writer` (the running vCPU).
void update_through(const Vcpu& writer, const Vcpu& vcpu) {
  if (!vcpu.runstate_area) return;
  vcpu_runstate_info info{};
  info.state = int(vcpu.runstate.state);
  info.state_entry_time = vcpu.runstate.entry_ns;
  for (unsigned i = 0; i < 4; ++i) info.time[i] = vcpu.runstate.time_ns[i];
  (void)guest_memory::write(writer, vcpu.runstate_area, info);
}
}  // namespace

void update(const Vcpu& vcpu) { update_through(vcpu, vcpu); }

long register_area(Vcpu& caller, Vcpu& vcpu, uint64_t argument) {
  vcpu_register_runstate_memory_area area;
  if (!guest_memory::read(caller, argument, area)) return -XEN_EFAULT;
  const uint64_t address = uint64_t(area.addr.v);
  if (address && !guest_range(address, sizeof(vcpu_runstate_info))) return -XEN_EFAULT;
  vcpu.runstate_area = address;
  update_through(caller, vcpu);
  return 0;
}
}  // namespace runstate_area
