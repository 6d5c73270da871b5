// Pure: what XEN_DOMCTL_getdomaininfo and XEN_SYSCTL_getdomaininfolist say about a domain,
// composed as Xen 4.17's getdomaininfo() composes it (xen/common/domctl.c), from facts the
// caller gathers; and which domains a request names (the first with an id at or above the one
// asked, as 4.17 searches its sorted domain list).
#pragma once
#include "control/control_abi.h"

namespace control {
// Xen's SHUTDOWN_CODE_INVALID: the shutdown code of a domain that never shut down. Xen puts
// it into the flags unmasked, so a running domain's flags carry 0xffff in bits 16..31.
constexpr uint32_t no_shutdown_code = ~0u;

struct VcpuFacts {
  uint32_t id = 0;
  bool online = true;       // not VPF_down
  bool blocked = false;     // VPF_blocked: waiting for an event
  bool running = false;     // on a CPU now
  uint64_t running_ns = 0;  // time spent in RUNSTATE_running, up to now
};

struct DomainFacts {
  domid_t id = 0;
  const VcpuFacts* vcpus = nullptr;
  unsigned vcpu_count = 0;
  bool dead = false;       // Xen's DOMDYING_dead (only then is XEN_DOMINF_dying set)
  bool shut_down = false;  // shut down or crashed
  uint32_t shutdown_code = no_shutdown_code;
  bool paused_by_controller = false;
  bool hvm = false;
  bool xenstore_domain = false;  // created with XEN_DOMCTL_CDF_xs_domain
  uint64_t tot_pages = 0, max_pages = 0;
  uint64_t shared_info_frame = 0;  // a PV domain's shared_info mfn (its gfn is the mfn)
  uint32_t ssidref = 0;
  uint32_t cpupool = 0;
  const uint8_t* handle = nullptr;  // sizeof(xen_domain_handle_t) bytes, or null for zeros
  uint8_t gpaddr_bits = 0;
};

// Fills every field as Xen does, the rest zero: blocked only when every online vCPU is,
// running when any is, neither for a domain without online vCPUs.
void fill_domain_info(const DomainFacts& facts, xen_domctl_getdomaininfo& info);

// The domain table as an ascending list of ids.
struct DomainIds {
  const domid_t* ids = nullptr;
  unsigned count = 0;
};
constexpr int no_domain = -1;

// The index of the first domain whose id is at least `wanted`, or no_domain.
int first_at_or_after(DomainIds domains, uint32_t wanted);

// Which domain getdomaininfo reports for `requested`: the domain itself when it exists (an
// index into `domains`), else -EINVAL for a reserved id (DOMID_SELF and above), else the next
// one up, else -ESRCH.
struct Selection {
  long error = 0;
  int index = no_domain;
};
Selection select_for_getdomaininfo(DomainIds domains, uint32_t requested);
}  // namespace control
