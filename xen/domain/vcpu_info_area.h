// VCPUOP_register_vcpu_info as Xen 4.17's map_vcpu_info (common/domain.c): the guest moves
// its vcpu_info out of shared_info into a frame of its own (Linux's per-CPU area). The frame is
// held with a writable type reference until the domain is destroyed; what the old vcpu_info
// held is copied over, and every event is marked pending so that none is lost in the move.
#pragma once
#include <stdint.h>

struct Vcpu;

namespace vcpu_info_area {
// For `vcpu` of the caller's domain (itself or another of its vCPUs, up or down: Linux
// registers each CPU's before bringing it up); the argument is read in the caller's address
// space. -EFAULT for an unreadable argument; -ENXIO for an offset that leaves no room for a
// vcpu_info or is not 8-byte aligned; -EINVAL for a second registration of that vCPU, or a
// frame that is not the domain's or cannot be writable (a page table, a descriptor frame).
long register_info(Vcpu& caller, Vcpu& vcpu, uint64_t argument);
// The frame given back (teardown); the vcpu_info is shared_info's again.
void release(Vcpu& vcpu);
}  // namespace vcpu_info_area
