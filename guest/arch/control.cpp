#include "arch/control.h"

#include "arch/hypercall.h"

namespace kernel::control {

xen_domctl_createdomain pv_domain_config() {
  xen_domctl_createdomain config{};
  config.max_vcpus = 1;
  config.max_evtchn_port = 1023;
  config.max_grant_frames = 32;
  config.max_maptrack_frames = 1024;
  config.grant_opts = XEN_DOMCTL_GRANT_version(1);
  return config;
}

xen_domctl_t domctl_request(uint32_t cmd, domid_t domain) {
  xen_domctl_t op{};
  op.cmd = cmd;
  op.interface_version = XEN_DOMCTL_INTERFACE_VERSION;
  op.domain = domain;
  return op;
}

xen_sysctl_t sysctl_request(uint32_t cmd) {
  xen_sysctl_t op{};
  op.cmd = cmd;
  op.interface_version = XEN_SYSCTL_INTERFACE_VERSION;
  return op;
}

long domctl_at(uint64_t address) { return arch::hypercall(__HYPERVISOR_domctl, address); }
long domctl(xen_domctl_t& op) { return domctl_at(arch::arg(&op)); }
long sysctl(xen_sysctl_t& op) { return arch::hypercall(__HYPERVISOR_sysctl, arch::arg(&op)); }

long simple_domctl(uint32_t cmd, domid_t domain) {
  xen_domctl_t op = domctl_request(cmd, domain);
  return domctl(op);
}

long get_info(domid_t domain, xen_domctl_getdomaininfo& info, domid_t* reported) {
  xen_domctl_t op = domctl_request(XEN_DOMCTL_getdomaininfo, domain);
  long rc = domctl(op);
  info = op.u.getdomaininfo;
  if (reported) *reported = op.domain;
  return rc;
}

long max_mem(domid_t domain, uint64_t kilobytes) {
  xen_domctl_t op = domctl_request(XEN_DOMCTL_max_mem, domain);
  op.u.max_mem.max_memkb = kilobytes;
  return domctl(op);
}

long max_vcpus(domid_t domain, uint32_t count) {
  xen_domctl_t op = domctl_request(XEN_DOMCTL_max_vcpus, domain);
  op.u.max_vcpus.max = count;
  return domctl(op);
}

long free_pages() {
  xen_sysctl_t op = sysctl_request(XEN_SYSCTL_physinfo);
  return sysctl(op) == 0 ? long(op.u.physinfo.free_pages) : -1;
}

}  // namespace kernel::control
