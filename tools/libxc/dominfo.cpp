#include "tools/libxc/dominfo.h"

#include <cstring>

namespace pvhv::xc {

void fill_dominfo(uint32_t domid, const xen_domctl_getdomaininfo_t& from, xc_dominfo_t& to) {
  to = xc_dominfo_t{};
  to.domid = domid;
  auto flag = [&](uint32_t bit) { return (from.flags & bit) ? 1u : 0u; };
  to.dying = flag(XEN_DOMINF_dying);
  to.shutdown = flag(XEN_DOMINF_shutdown);
  to.paused = flag(XEN_DOMINF_paused);
  to.blocked = flag(XEN_DOMINF_blocked);
  to.running = flag(XEN_DOMINF_running);
  to.hvm = flag(XEN_DOMINF_hvm_guest);
  to.debugged = flag(XEN_DOMINF_debugged);
  to.xenstore = flag(XEN_DOMINF_xs_domain);
  to.hap = flag(XEN_DOMINF_hap);
  to.shutdown_reason = (from.flags >> XEN_DOMINF_shutdownshift) & XEN_DOMINF_shutdownmask;
  if (to.shutdown && to.shutdown_reason == SHUTDOWN_crash) {
    to.shutdown = 0;
    to.crashed = 1;
  }
  to.ssidref = from.ssidref;
  to.nr_pages = from.tot_pages;
  to.nr_outstanding_pages = from.outstanding_pages;
  to.nr_shared_pages = from.shr_pages;
  to.nr_paged_pages = from.paged_pages;
  to.max_memkb = from.max_pages << (12 - 10);
  to.shared_info_frame = from.shared_info_frame;
  to.cpu_time = from.cpu_time;
  to.nr_online_vcpus = from.nr_online_vcpus;
  to.max_vcpu_id = from.max_vcpu_id;
  to.cpupool = from.cpupool;
  to.gpaddr_bits = from.gpaddr_bits;
  to.arch_config = from.arch_config;
  std::memcpy(to.handle, from.handle, sizeof(xen_domain_handle_t));
}

e820entry memmap_limit_entry(unsigned long map_limitkb) {
  e820entry entry{};
  entry.addr = 0;
  entry.size = uint64_t(map_limitkb) << 10;
  entry.type = E820_RAM;
  return entry;
}

}  // namespace pvhv::xc
