#include "control/domctl_rules.h"

#include "common/xen/pvhv_domctl.h"

namespace control {
long check_domctl_version(uint32_t interface_version) {
  return interface_version == XEN_DOMCTL_INTERFACE_VERSION ? 0 : -XEN_EACCES;
}

long check_sysctl_version(uint32_t interface_version) {
  return interface_version == XEN_SYSCTL_INTERFACE_VERSION ? 0 : -XEN_EACCES;
}

// createdomain names no domain yet; getdomaininfo looks further when its domain is missing.
// (Xen's device-assignment sub-ops also accept DOMID_IO or DOMID_INVALID; none is served.)
bool needs_existing_domain(uint32_t cmd) { return cmd != XEN_DOMCTL_createdomain && cmd != XEN_DOMCTL_getdomaininfo; }

long domctl_access(uint32_t, bool caller_privileged) { return caller_privileged ? 0 : -XEN_EPERM; }

long domctl_admission(uint32_t interface_version, uint32_t cmd, bool domain_found, bool caller_privileged) {
  if (long error = check_domctl_version(interface_version)) return error;
  if (!domain_found && needs_existing_domain(cmd)) return -XEN_ESRCH;
  return domctl_access(cmd, caller_privileged);
}

bool domctl_served(uint32_t cmd) {
  switch (cmd) {
    case XEN_DOMCTL_pausedomain:
    case XEN_DOMCTL_unpausedomain:
    case XEN_DOMCTL_getdomaininfo:
    case XEN_DOMCTL_max_mem:
    case XEN_DOMCTL_getvcpuinfo:
    case XEN_DOMCTL_setvcpuaffinity:
    case XEN_DOMCTL_getvcpuaffinity:
    case XEN_DOMCTL_max_vcpus:
    case XEN_DOMCTL_setdomainhandle:
    case XEN_DOMCTL_createdomain:
    case XEN_DOMCTL_destroydomain:
    case XEN_DOMCTL_setvcpucontext:
    case XEN_DOMCTL_getvcpucontext:
    case XEN_DOMCTL_set_address_size:
    case XEN_DOMCTL_get_address_size:
    case XEN_DOMCTL_hypercall_init:
    case pvhv::xen_abi::kDomctlPtwrMode: return true;  // ours, outside Xen's numbers
    default: return false;
  }
}

// The numbers Xen 4.17's public/domctl.h defines: 1..86 less the removed and never assigned
// ones, and gdbsx's four.
bool domctl_known_to_xen(uint32_t cmd) {
  switch (cmd) {
    case 6:
    case 7:
    case 8:
    case 30:
    case 31:
    case 32:
    case 41:
    case 49:
    case 51:
    case 52:
    case 53:
    case 58:
    case 70:
    case 76:
    case 80: return false;
    default:
      return (cmd >= XEN_DOMCTL_createdomain && cmd <= XEN_DOMCTL_set_paging_mempool_size) ||
             (cmd >= XEN_DOMCTL_gdbsx_guestmemio && cmd <= XEN_DOMCTL_gdbsx_domstatus);
  }
}

long domctl_unserved_answer(uint32_t cmd) { return domctl_known_to_xen(cmd) ? -XEN_EOPNOTSUPP : -XEN_ENOSYS; }

// createdomain (the id chosen), get_address_size; getvcpucontext copies the context itself
// and then the request (Xen sets copyback there too).
bool domctl_copies_back(uint32_t cmd) {
  switch (cmd) {
    case XEN_DOMCTL_getdomaininfo:
    case XEN_DOMCTL_getvcpuinfo:
    case XEN_DOMCTL_createdomain:
    case XEN_DOMCTL_getvcpucontext:
    case XEN_DOMCTL_get_address_size:
    case pvhv::xen_abi::kDomctlPtwrMode: return true;  // the mode the domain has
    default: return false;
  }
}

long check_not_self(bool target_is_caller) { return target_is_caller ? -XEN_EINVAL : 0; }

long check_max_vcpus(bool target_is_caller, uint32_t requested, uint32_t domain_max_vcpus) {
  return target_is_caller || requested != domain_max_vcpus ? -XEN_EINVAL : 0;
}

long check_vcpu_index(uint32_t vcpu, uint32_t domain_max_vcpus, bool vcpu_exists) {
  if (vcpu >= domain_max_vcpus) return -XEN_EINVAL;
  return vcpu_exists ? 0 : -XEN_ESRCH;
}

uint64_t max_pages_from_kb(uint64_t max_memkb) {
  uint64_t pages = max_memkb >> 2;
  return pages < UINT32_MAX ? pages : UINT32_MAX;
}
}  // namespace control
