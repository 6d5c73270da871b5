// Information sysctls: physinfo (and the CPU counts built on it), the console ring, the domain
// list. Each is Xen 4.17's call: the hypervisor says whether it serves the sub-op (ours answers
// -ENOSYS for those it does not have yet, and the call fails with that errno, as on Xen).
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "tools/libxc/xc_private.h"

using namespace pvhv::xc;

int xc_physinfo(xc_interface* xch, xc_physinfo_t* info) {
  xen_sysctl_t sysctl{};
  sysctl.cmd = XEN_SYSCTL_physinfo;
  std::memcpy(&sysctl.u.physinfo, info, sizeof(*info));  // IN fields (none today) as the caller set them
  int rc = do_sysctl(xch, sysctl);
  if (rc != 0) return rc;
  std::memcpy(info, &sysctl.u.physinfo, sizeof(*info));
  return 0;
}

int xc_get_max_cpus(xc_interface* xch) {
  if (xch->max_cpus) return xch->max_cpus;
  xc_physinfo_t physinfo{};
  if (xc_physinfo(xch, &physinfo) != 0) return -1;
  xch->max_cpus = int(physinfo.max_cpu_id) + 1;
  return xch->max_cpus;
}

int xc_get_online_cpus(xc_interface* xch) {
  xc_physinfo_t physinfo{};
  if (xc_physinfo(xch, &physinfo) != 0) return -1;
  return int(physinfo.nr_cpus);
}

int xc_get_cpumap_size(xc_interface* xch) {
  int cpus = xc_get_max_cpus(xch);
  return cpus < 0 ? -1 : (cpus + 7) / 8;
}

int xc_readconsolering(xc_interface* xch, char* buffer, unsigned int* pnr_chars, int clear, int incremental,
                       uint32_t* pindex) {
  unsigned int count = *pnr_chars;
  Bounce bounce(xch, buffer, count, Bounce::out);
  if (bounce.prepare() < 0) return -1;
  xen_sysctl_t sysctl{};
  sysctl.cmd = XEN_SYSCTL_readconsole;
  set_handle(sysctl.u.readconsole.buffer, bounce.address());
  sysctl.u.readconsole.count = count;
  sysctl.u.readconsole.clear = uint8_t(clear);
  sysctl.u.readconsole.incremental = 0;
  if (pindex) {
    sysctl.u.readconsole.index = *pindex;
    sysctl.u.readconsole.incremental = uint8_t(incremental);
  }
  int rc = do_sysctl(xch, sysctl);
  if (rc == 0) {
    *pnr_chars = sysctl.u.readconsole.count;
    if (pindex) *pindex = sysctl.u.readconsole.index;
  }
  int saved = errno;
  if (bounce.finish() < 0 && rc == 0) return -1;
  errno = saved;
  return rc;
}

int xc_domain_getinfolist(xc_interface* xch, uint32_t first_domain, unsigned int max_domains, xc_domaininfo_t* info) {
  Bounce bounce(xch, info, size_t(max_domains) * sizeof(*info), Bounce::out);
  if (bounce.prepare() < 0) return -1;
  xen_sysctl_t sysctl{};
  sysctl.cmd = XEN_SYSCTL_getdomaininfolist;
  sysctl.u.getdomaininfolist.first_domain = first_domain;
  sysctl.u.getdomaininfolist.max_domains = max_domains;
  set_handle(sysctl.u.getdomaininfolist.buffer, bounce.address());
  int rc = do_sysctl(xch, sysctl) < 0 ? -1 : int(sysctl.u.getdomaininfolist.num_domains);
  int saved = errno;
  if (bounce.finish() < 0 && rc >= 0) return -1;
  errno = saved;
  return rc;
}

xc_cpumap_t xc_cpumap_alloc(xc_interface* xch) {
  int bytes = xc_get_cpumap_size(xch);
  return bytes <= 0 ? nullptr : static_cast<xc_cpumap_t>(calloc(1, size_t(bytes)));
}

void xc_cpumap_clearcpu(int cpu, xc_cpumap_t map) { map[cpu / 8] &= uint8_t(~(1u << (cpu % 8))); }
void xc_cpumap_setcpu(int cpu, xc_cpumap_t map) { map[cpu / 8] |= uint8_t(1u << (cpu % 8)); }
int xc_cpumap_testcpu(int cpu, xc_cpumap_t map) { return (map[cpu / 8] >> (cpu % 8)) & 1; }

// XEN_SYSCTL_cputopoinfo: *max_cpus entries into cputopo (null: only the count), *max_cpus
// set to what the hypervisor answers (xen/sysctl.h's num_cpus rules).
int xc_cputopoinfo(xc_interface* xch, unsigned* max_cpus, xc_cputopo_t* cputopo) {
  Bounce bounce(xch, cputopo, size_t(*max_cpus) * sizeof(*cputopo), Bounce::out);
  if (bounce.prepare() < 0) return -1;
  xen_sysctl_t sysctl{};
  sysctl.cmd = XEN_SYSCTL_cputopoinfo;
  sysctl.u.cputopoinfo.num_cpus = *max_cpus;
  set_handle(sysctl.u.cputopoinfo.cputopo, bounce.address());
  int rc = do_sysctl(xch, sysctl);
  if (rc == 0) *max_cpus = sysctl.u.cputopoinfo.num_cpus;
  int saved = errno;
  if (bounce.finish() < 0 && rc == 0) return -1;
  errno = saved;
  return rc;
}

// XEN_SYSCTL_getcpuinfo: each CPU's idle time (ns), up to max_cpus; *nr_cpus the count written
// (set whatever the call's result, as Xen's).
int xc_getcpuinfo(xc_interface* xch, int max_cpus, xc_cpuinfo_t* info, int* nr_cpus) {
  Bounce bounce(xch, info, size_t(max_cpus > 0 ? max_cpus : 0) * sizeof(*info), Bounce::out);
  if (bounce.prepare() < 0) return -1;
  xen_sysctl_t sysctl{};
  sysctl.cmd = XEN_SYSCTL_getcpuinfo;
  sysctl.u.getcpuinfo.max_cpus = uint32_t(max_cpus);
  set_handle(sysctl.u.getcpuinfo.info, bounce.address());
  int rc = do_sysctl(xch, sysctl);
  int saved = errno;
  bounce.finish();
  if (nr_cpus) *nr_cpus = int(sysctl.u.getcpuinfo.nr_cpus);
  errno = saved;
  return rc;
}
