// Pure: the rules of Xen 4.17's do_domctl (xen/common/domctl.c) before and around each
// sub-op, in Xen's order: the request is copied in (-EFAULT), its interface version checked
// (-EACCES), the domain it names looked up (-ESRCH, except getdomaininfo, which searches
// onwards), then the caller's privilege (the XSM dummy policy's answer, -EPERM), then the
// sub-op's own checks. The glue (hypercall/domctl.cpp) gathers the facts and applies them.
#pragma once
#include "control/control_abi.h"

namespace control {
// domctl and sysctl share the number, but each is checked against its own constant.
long check_domctl_version(uint32_t interface_version);
long check_sysctl_version(uint32_t interface_version);

// Whether a domctl needs the domain it names to exist before anything else is looked at.
bool needs_existing_domain(uint32_t cmd);

// The XSM dummy policy for domctl: XSM_PRIV for every sub-op, XSM_XS_PRIV for getdomaininfo
// and XSM_DM_PRIV for the device-model ones. Both of the latter also let a xenstore domain
// or a device model of the target through; neither exists here (no domain is built with
// either role), so each reduces to "the caller is the control domain".
long domctl_access(uint32_t cmd, bool caller_privileged);

// Everything do_domctl answers before the sub-op runs, in its order: 0 to go on.
long domctl_admission(uint32_t interface_version, uint32_t cmd, bool domain_found, bool caller_privileged);

// The sub-ops this hypervisor serves; the rest of Xen's are answered with -EOPNOTSUPP, and
// numbers Xen does not know with what Xen answers for them (arch_do_domctl: -ENOSYS).
bool domctl_served(uint32_t cmd);
bool domctl_known_to_xen(uint32_t cmd);
long domctl_unserved_answer(uint32_t cmd);

// Whether the request goes back to the caller after the sub-op succeeds.
bool domctl_copies_back(uint32_t cmd);

// XEN_DOMCTL_pausedomain (and the other sub-ops Xen refuses on the caller itself, having no
// domain_pause() of its own running vCPU): -EINVAL when the target is the caller.
long check_not_self(bool target_is_caller);

// XEN_DOMCTL_max_vcpus: the number of vCPUs is fixed when the domain is created, so the only
// accepted value is that one (-EINVAL otherwise, and on the caller itself).
long check_max_vcpus(bool target_is_caller, uint32_t requested, uint32_t domain_max_vcpus);

// XEN_DOMCTL_getvcpuinfo: -EINVAL beyond the domain's vCPU count, -ESRCH for a vCPU slot
// not created.
long check_vcpu_index(uint32_t vcpu, uint32_t domain_max_vcpus, bool vcpu_exists);

// XEN_DOMCTL_max_mem: kilobytes to pages, kept to Xen's 32-bit max_pages. No check against
// the pages the domain holds: Xen lets it "ratchet" down.
uint64_t max_pages_from_kb(uint64_t max_memkb);
}  // namespace control
