// The domain side of the control hypercalls (domctl, sysctl): a domain described as Xen's
// getdomaininfo describes it, the domain table as the ascending id list the pure search takes,
// and the control domain's pauses, which take a domain off the CPU until the last unpause.
#pragma once
#include "control/control_abi.h"
#include "control/domain_info.h"
#include "domain/domain.h"

namespace domain_control {
void describe(const Domain& domain, xen_domctl_getdomaininfo& info);

struct DomainList {
  domid_t ids[domains::max_domains];
  control::DomainIds view;
};
void list(DomainList& list);

long pause(Domain& domain);    // 0 or -EOVERFLOW; never the caller's own domain
long unpause(Domain& domain);  // 0 or -EINVAL
}  // namespace domain_control
