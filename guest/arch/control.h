// The control hypercalls (domctl and sysctl, Xen 4.17's interface versions) as dom0's
// selftests and the fuzzing companion make them: one request builder and one caller for each,
// so every test speaks the same structures.
#pragma once
#define __XEN_TOOLS__ 1  // domctl.h and sysctl.h are the tools' interface (guest handles need it)
#include <stdint.h>
#include <xen/xen.h>
#include <xen/domctl.h>
#include <xen/sysctl.h>

namespace kernel::control {

// A domctl for `domain` with the interface version filled in, the rest zero.
xen_domctl_t domctl_request(uint32_t cmd, domid_t domain);
// A sysctl with the interface version filled in, the rest zero.
xen_sysctl_t sysctl_request(uint32_t cmd);

long domctl(xen_domctl_t& op);
long domctl_at(uint64_t address);  // a domctl structure at any address, good or bad
long sysctl(xen_sysctl_t& op);

// createdomain's configuration as xl gives a PV domain of one vCPU.
xen_domctl_createdomain pv_domain_config();

// A domctl with no argument but the domain (pause, unpause, destroy, ...).
long simple_domctl(uint32_t cmd, domid_t domain);
// getdomaininfo: the first domain at or above `domain`; `reported` gets the id answered for.
long get_info(domid_t domain, xen_domctl_getdomaininfo& info, domid_t* reported = nullptr);
long max_mem(domid_t domain, uint64_t kilobytes);
long max_vcpus(domid_t domain, uint32_t count);
// physinfo's free pages, or -1 if physinfo fails.
long free_pages();

}  // namespace kernel::control
