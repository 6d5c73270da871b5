// What a domain keeps of the xen_domctl_createdomain it was created with, once checked
// (control/create_config). Plain types only: domain/domain.h includes it, and the tools'
// headers (control_abi.h) must not come in through there.
#pragma once
#include <stdint.h>

namespace control {
// The vCPUs a domain may have here (Xen: MAX_VIRT_CPUS, 8192 for PV; createdomain refuses more
// with Xen's -EINVAL). Each Domain holds this many Vcpus in a fixed array (domain/domain.h), so
// it sizes the domain table: about 5.5 KiB a vCPU (mostly its 256-entry trap table and FPU state).
constexpr uint32_t max_vcpus_per_domain = 8;

// What the domain keeps of its configuration once the checks pass.
struct DomainConfig {
  uint32_t flags = 0;  // XEN_DOMCTL_CDF_*, with oos_off added for PV (as Xen)
  uint32_t max_vcpus = 1;
  uint32_t max_evtchn_port = 0;  // as Xen: min(asked, INT_MAX); our table bounds it further
  int32_t max_grant_frames = 0;  // defaults resolved
  int32_t max_maptrack_frames = 0;
  uint32_t emulation_flags = 0;  // 0 or XEN_X86_EMU_PIT for PV
  bool xenstore_domain = false;
};

}  // namespace control
