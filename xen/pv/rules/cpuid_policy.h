// Pure: what CPUID answers a PV guest, as Xen 4.17's guest_cpuid does with its default PV
// policy (xen/arch/x86/cpu-policy.c, cpuid.c, and traps.c's cpuid_hypervisor_leaves). The
// host's own answers go in; out comes the guest's view:
//  - feature words masked by Xen's default PV featureset (pv_featuremask.h, generated from
//    the public cpufeatureset.h), HYPERVISOR forced on, HTT as the host's; OSXSAVE as Xen
//    leaks it to a kernel's forced-emulation CPUID when the hypervisor itself enabled XSAVE;
//  - basic leaves up to 0xd and extended up to 0x80000008 (Intel) / 0x80000021 (AMD), with
//    Xen's recalculate_misc: APIC id 0, MONITOR/thermal/topology leaves empty, PSN hidden,
//    Intel's extended vendor and power leaves cleared;
//  - the hypervisor leaves 0x40000000..0x40000005: "XenVMMXenVMM", version 4.17, one
//    hypercall page at MSR 0x40000000 with MMU_PT_UPDATE_PRESERVE_AD, the time leaf, no HVM
//    leaf, and leaf 5's machine address width;
//  - anything else (beyond the maxima, 0x40000100.., unknown ranges) all zeros.
// What is not modelled: toolstack-chosen policies (every domain gets Xen's default), vPMU,
// XSAVE state sizes beyond the host's, and the dependency closure of sanitise_featureset (a
// consistent host CPU needs none).
#pragma once
#include <stdint.h>

namespace cpuid_policy {

struct Leaf {
  uint32_t a = 0, b = 0, c = 0, d = 0;
  bool operator==(const Leaf&) const = default;
};

// The host: the CPU's own CPUID, and what the hypervisor knows about the machine.
struct Host {
  Leaf (*query)(const void* cookie, uint32_t leaf, uint32_t subleaf) = nullptr;
  const void* cookie = nullptr;
  bool cr4_osxsave = false;    // the hypervisor runs with CR4.OSXSAVE set
  uint64_t highest_mfn = 0;    // the highest machine frame there may be (leaf 0x40000005)
  uint32_t tsc_khz = 0;        // the TSC's frequency (time leaf)
  uint32_t tsc_to_ns_mul = 0;  // the TSC-to-nanoseconds scale of vcpu_time_info
  int8_t tsc_to_ns_shift = 0;
};

// Who asks, and how: Xen's answer depends on the mode and on the path (the forced-emulation
// #UD or a faulting CPUID's #GP).
struct Asker {
  bool kernel_mode = true;
  bool forced_emulation = true;  // through `ud2; .ascii "xen"; cpuid`
  bool hardware_domain = false;
  uint64_t guest_cr4 = 0;  // the CR4 the PV guest believes it has
};

inline constexpr uint32_t kHypervisorBase = 0x40000000;
inline constexpr uint32_t kHypervisorLeaves = 5;  // XEN_CPUID_MAX_NUM_LEAVES
inline constexpr uint32_t kXenMajor = 4, kXenMinor = 17;

Leaf guest_cpuid(const Host& host, const Asker& asker, uint32_t leaf, uint32_t subleaf);

}  // namespace cpuid_policy
