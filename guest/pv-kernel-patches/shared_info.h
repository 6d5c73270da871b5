#pragma once
// The shared info page (event channels, time, vCPU 0's vcpu_info). A PV guest is given only
// its machine address in start_info and must map it itself.
#include "arch/xen.h"

namespace kernel {

extern shared_info_t* shared_info_page;
// vCPU 0's vcpu_info once VCPUOP_register_vcpu_info moved it out of shared_info (null: not).
extern vcpu_info_t* registered_vcpu_info;

inline shared_info_t* shared_info() { return shared_info_page; }
inline vcpu_info_t* vcpu() { return registered_vcpu_info ? registered_vcpu_info : &shared_info_page->vcpu_info[0]; }

// Maps start_info->shared_info over a reserved page of the kernel image.
void shared_info_map();

}  // namespace kernel
