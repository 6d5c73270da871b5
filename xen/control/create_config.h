// Pure: the checks XEN_DOMCTL_createdomain makes of its xen_domctl_createdomain before a
// domain exists, in Xen 4.17's order (xen/common/domain.c sanitise_domain_config, then
// xen/arch/x86/domain.c arch_sanitise_domain_config, arch_domain_create's emulation flags,
// evtchn_init, grant_table_init, sched_init_domain's cpupool), with the answers Xen gives on
// a machine like ours: no HVM (no VMX/SVM under TCG: hvm_enabled is false), hence no HAP,
// no IOMMU, no vmtrace, no vPMU, no tboot. Differences of ours, said where they are checked:
// at most max_vcpus_per_domain vCPUs (more is -EINVAL, Xen's answer beyond its MAX_VIRT_CPUS).
#pragma once
#include "control/control_abi.h"
#include "control/domain_config.h"

namespace control {
// Xen 4.17's defaults (gnttab_max_frames, gnttab_max_maptrack_frames, gnttab max version).
constexpr int32_t max_grant_frames_default = 64;
constexpr int32_t max_maptrack_frames_default = 1024;
constexpr unsigned max_grant_version = 2;

// 0 with `out` filled, or Xen's error: -EINVAL for every refused value but emulation flags
// Xen knows yet does not allow for PV (-EOPNOTSUPP) and a cpupool that does not exist (-ESRCH).
// `hardware_domain`: the domain will be the hardware domain (dom0 built at boot), which Xen
// gives the PIT emulation itself.
long check_create_config(const xen_domctl_createdomain& config, bool hardware_domain, DomainConfig& out);
}  // namespace control
