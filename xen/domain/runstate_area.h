// VCPUOP_register_runstate_memory_area as Xen 4.17's common/domain.c serves it: the guest
// names a vcpu_runstate_info in its memory; the hypervisor writes the vCPU's runstate there
// at once and whenever the vCPU is switched in or out (Xen's update_runstate_area), while the
// guest's address space is the one loaded. A write that faults is dropped, as Xen's.
#pragma once
#include <stdint.h>

struct Vcpu;

namespace runstate_area {
// For `vcpu` of the caller's domain (the caller itself or another of its vCPUs; the argument
// and the area are read and written in the caller's address space, as Xen's copies run on
// the current vCPU's): -EFAULT for an unreadable argument or an area in the hypervisor's range
// or non-canonical.
long register_area(Vcpu& caller, Vcpu& vcpu, uint64_t argument);
// The vCPU's runstate into its area, if it registered one (it must be the running vCPU).
void update(const Vcpu& vcpu);
}  // namespace runstate_area
