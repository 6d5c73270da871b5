// Pure: XEN_SYSCTL_physinfo as Xen 4.17 fills it (xen/common/sysctl.c and arch_do_physinfo),
// from what the machine and the frame allocator say; and the CPUID decoding Xen uses for the
// guest physical address width getdomaininfo reports.
#pragma once
#include "control/control_abi.h"

namespace control {
struct MachineFacts {
  uint32_t online_cpus = 1;
  uint32_t threads_per_core = 1;
  uint32_t cores_per_socket = 1;
  uint32_t cpu_khz = 0;
  uint64_t total_pages = 0;  // RAM in the firmware's memory map, as Xen counts it
  uint64_t free_pages = 0;   // what the frame allocator could still hand out
  uint64_t max_mfn = 0;      // the highest machine frame
  uint32_t hw_cap[8] = {};   // CPUID feature words in Xen's featureset order
  bool pv = true, hvm = false, hap = false, shadow = false;
};

// The CPU fields from `facts` (one CPU by default); hypercall/sysctl.cpp then fills them from the
// machine's topology (control/cpu_topology.h's fill_physinfo_cpus).
void fill_physinfo(const MachineFacts& facts, xen_sysctl_physinfo& info);

// Xen's hap_paddr_bits: CPUID 0x80000008 EAX bits 23:16 (guest physical width), else bits
// 7:0 (physical width), at most 52; 36 when the leaf does not exist.
uint8_t guest_physical_address_bits(uint32_t max_extended_leaf, uint32_t eax_80000008);
}  // namespace control
