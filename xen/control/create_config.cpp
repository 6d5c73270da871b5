#include "control/create_config.h"

namespace control {
namespace {
constexpr uint32_t known_flags = XEN_DOMCTL_CDF_hvm | XEN_DOMCTL_CDF_hap | XEN_DOMCTL_CDF_s3_integrity |
                                 XEN_DOMCTL_CDF_oos_off | XEN_DOMCTL_CDF_xs_domain | XEN_DOMCTL_CDF_iommu |
                                 XEN_DOMCTL_CDF_nested_virt | XEN_DOMCTL_CDF_vpmu;
constexpr int32_t initial_grant_frames = 1;  // Xen's INITIAL_NR_GRANT_FRAMES
constexpr uint32_t int_max = 0x7fffffff;

// sanitise_domain_config: the common checks. Every feature this machine lacks is "not
// available" (-EINVAL), as Xen reports it where the hardware or build lacks it.
long sanitise(const xen_domctl_createdomain& config) {
  const uint32_t flags = config.flags;
  if (flags & ~known_flags) return -XEN_EINVAL;  // unknown CDF flags
  if (config.grant_opts & ~uint32_t(XEN_DOMCTL_GRANT_version_mask)) return -XEN_EINVAL;
  if (config.max_vcpus < 1) return -XEN_EINVAL;  // no vCPUs
  if ((flags & XEN_DOMCTL_CDF_hap) && !(flags & XEN_DOMCTL_CDF_hvm)) return -XEN_EINVAL;
  if (flags & XEN_DOMCTL_CDF_iommu) return -XEN_EINVAL;  // no IOMMU
  if (config.iommu_opts) return -XEN_EINVAL;             // options without IOMMU
  if (config.vmtrace_size) return -XEN_EINVAL;           // vmtrace unavailable
  if (flags & XEN_DOMCTL_CDF_vpmu) return -XEN_EINVAL;   // vPMU off (Xen's default)
  return 0;
}

// arch_sanitise_domain_config for x86 without HVM support.
long arch_sanitise(const xen_domctl_createdomain& config) {
  const uint32_t flags = config.flags;
  if (flags & XEN_DOMCTL_CDF_hvm) return -XEN_EINVAL;  // "HVM support not available"
  // Ours: at most max_vcpus_per_domain (Xen: MAX_VIRT_CPUS for PV, with the same -EINVAL beyond).
  if (config.max_vcpus > max_vcpus_per_domain) return -XEN_EINVAL;
  if (flags & XEN_DOMCTL_CDF_s3_integrity) return -XEN_EINVAL;  // no tboot
  if (flags & XEN_DOMCTL_CDF_nested_virt) return -XEN_EINVAL;   // needs HAP
  if (config.arch.misc_flags & ~uint32_t(XEN_X86_MSR_RELAXED)) return -XEN_EINVAL;
  return 0;
}

// arch_domain_create: a PV domain emulates at most the PIT (the hardware domain always does).
long emulation(const xen_domctl_createdomain& config, bool hardware_domain, uint32_t& emulation_flags) {
  emulation_flags = config.arch.emulation_flags | (hardware_domain ? uint32_t(XEN_X86_EMU_PIT) : 0u);
  if (emulation_flags & ~uint32_t(XEN_X86_EMU_ALL)) return -XEN_EINVAL;
  if (emulation_flags != 0 && emulation_flags != XEN_X86_EMU_PIT) return -XEN_EOPNOTSUPP;
  return 0;
}

// grant_table_init: a version 1 .. 2, frames within the hypervisor's limits (-1: the default).
long grant_limits(const xen_domctl_createdomain& config, int32_t& grant_frames, int32_t& maptrack_frames) {
  unsigned version = config.grant_opts & XEN_DOMCTL_GRANT_version_mask;
  if (version == 0 || version > max_grant_version) return -XEN_EINVAL;
  grant_frames = config.max_grant_frames < 0 ? max_grant_frames_default : config.max_grant_frames;
  maptrack_frames = config.max_maptrack_frames < 0 ? max_maptrack_frames_default : config.max_maptrack_frames;
  if (grant_frames < initial_grant_frames || grant_frames > max_grant_frames_default ||
      maptrack_frames > max_maptrack_frames_default)
    return -XEN_EINVAL;
  return 0;
}
}  // namespace

long check_create_config(const xen_domctl_createdomain& config, bool hardware_domain, DomainConfig& out) {
  if (long error = sanitise(config)) return error;
  if (long error = arch_sanitise(config)) return error;
  DomainConfig checked;
  checked.flags = config.flags | XEN_DOMCTL_CDF_oos_off;  // only meaningful clear for HVM
  checked.max_vcpus = config.max_vcpus;
  if (long error = emulation(config, hardware_domain, checked.emulation_flags)) return error;
  checked.max_evtchn_port = config.max_evtchn_port < int_max ? config.max_evtchn_port : int_max;
  if (long error = grant_limits(config, checked.max_grant_frames, checked.max_maptrack_frames)) return error;
  if (config.cpupool_id != 0) return -XEN_ESRCH;  // cpupool_add_domain: pool 0 is the only one
  checked.xenstore_domain = config.flags & XEN_DOMCTL_CDF_xs_domain;
  out = checked;
  return 0;
}
}  // namespace control
