// The domain calls: lifecycle (create, pause, unpause, shutdown, destroy), information
// (getinfo, vcpu_getinfo), limits (max_vcpus, setmaxmem, memory map), memory on behalf of a
// domain (populate_physmap, reservations), vCPU contexts, the handle, event channels in
// another domain, page-table pins, and the raw xc_domctl / xc_sysctl / xc_memory_op. Each is
// Xen 4.17's libxenctrl function: the same structure filled the same way, the same hypercall,
// -1 with errno (or what Xen's returns) on failure.
//
// Calls Xen makes by mapping another domain's memory (xc_copy_to_domain_page,
// xc_clear_domain_pages) copy through the relay's FOREIGN_WRITE instead: nothing is mapped.
#include <cerrno>
#include <cstring>
#include <vector>

#include "tools/libxc/dominfo.h"
#include "tools/libxc/xc_private.h"

using namespace pvhv::xc;

namespace {

xen_domctl_t domctl_for(uint32_t cmd, uint32_t domid) {
  xen_domctl_t domctl{};
  domctl.cmd = cmd;
  domctl.domain = domid_t(domid);
  return domctl;
}

int simple_domctl(xc_interface* xch, uint32_t cmd, uint32_t domid) {
  xen_domctl_t domctl = domctl_for(cmd, domid);
  return do_domctl(xch, domctl);
}

// A vCPU context bounced through a relay buffer, the domctl pointing at it (set and get).
int vcpu_context(xc_interface* xch, uint32_t cmd, uint32_t domid, uint32_t vcpu, vcpu_guest_context_any_t* ctxt,
                 Bounce::Direction direction) {
  Bounce bounce(xch, ctxt, sizeof(*ctxt), direction);
  if (bounce.prepare() < 0) return -1;
  xen_domctl_t domctl = domctl_for(cmd, domid);
  domctl.u.vcpucontext.vcpu = vcpu;
  set_handle(domctl.u.vcpucontext.ctxt, bounce.address());
  int rc = do_domctl(xch, domctl);
  int saved = errno;
  if (bounce.finish() < 0 && rc == 0) return -1;
  errno = saved;
  return rc;
}

// A reservation op (populate, increase, decrease) with its extent list bounced both ways.
long reservation_op(xc_interface* xch, unsigned cmd, uint32_t domid, unsigned long nr_extents,
                    unsigned int extent_order, unsigned int mem_flags, xen_pfn_t* extent_start) {
  Bounce extents(xch, extent_start, nr_extents * sizeof(*extent_start), Bounce::both);
  if (extents.prepare() < 0) {
    perror(xch, "Could not bounce memory for XENMEM reservation hypercall");
    return -1;
  }
  xen_memory_reservation reservation{};
  reservation.nr_extents = nr_extents;
  reservation.extent_order = extent_order;
  reservation.mem_flags = mem_flags;
  reservation.domid = domid_t(domid);
  set_handle(reservation.extent_start, extents.address());
  long rc = do_memory_op(xch, cmd, &reservation, sizeof(reservation));
  int saved = errno;
  if (extents.finish() < 0 && rc >= 0) return -1;
  errno = saved;
  return rc;
}

// Xen's _exact wrappers: fewer extents than asked is EBUSY.
int exact(long done, unsigned long asked) {
  if (done == long(asked)) return 0;
  if (done >= 0) {
    errno = EBUSY;
    return -1;
  }
  return int(done);
}

}  // namespace

int xc_domctl(xc_interface* xch, struct xen_domctl* domctl) { return do_domctl(xch, *domctl); }

int xc_sysctl(xc_interface* xch, struct xen_sysctl* sysctl) { return do_sysctl(xch, *sysctl); }

long xc_memory_op(xc_interface* xch, unsigned int cmd, void* arg, size_t len) {
  return do_memory_op(xch, cmd, arg, len);
}

int xc_domain_create(xc_interface* xch, uint32_t* pdomid, struct xen_domctl_createdomain* config) {
  xen_domctl_t domctl = domctl_for(XEN_DOMCTL_createdomain, *pdomid);
  domctl.u.createdomain = *config;
  int rc = do_domctl(xch, domctl);
  if (rc != 0) return rc;
  *pdomid = uint16_t(domctl.domain);
  *config = domctl.u.createdomain;
  return 0;
}

int xc_domain_pause(xc_interface* xch, uint32_t domid) { return simple_domctl(xch, XEN_DOMCTL_pausedomain, domid); }

int xc_domain_unpause(xc_interface* xch, uint32_t domid) { return simple_domctl(xch, XEN_DOMCTL_unpausedomain, domid); }

int xc_domain_destroy(xc_interface* xch, uint32_t domid) { return simple_domctl(xch, XEN_DOMCTL_destroydomain, domid); }

int xc_domain_shutdown(xc_interface* xch, uint32_t domid, int reason) {
  sched_remote_shutdown_t arg{};
  arg.domain_id = domid_t(domid);
  arg.reason = unsigned(reason);
  Bounce bounce(xch, &arg, sizeof(arg), Bounce::in);
  if (bounce.prepare() < 0) {
    perror(xch, "Could not allocate memory for xc_domain_shutdown hypercall");
    return -1;
  }
  long rc = hypercall(xch, __HYPERVISOR_sched_op, SCHEDOP_remote_shutdown, bounce.address());
  int saved = errno;
  bounce.finish();
  errno = saved;
  return int(rc);
}

int xc_domain_getinfo(xc_interface* xch, uint32_t first_domid, unsigned int max_doms, xc_dominfo_t* info) {
  std::memset(static_cast<void*>(info), 0, max_doms * sizeof(*info));
  uint32_t next = first_domid;
  unsigned found = 0;
  int rc = 0;
  for (; found < max_doms; ++found) {
    xen_domctl_t domctl = domctl_for(XEN_DOMCTL_getdomaininfo, next);
    if ((rc = do_domctl(xch, domctl)) < 0) break;
    fill_dominfo(domctl.domain, domctl.u.getdomaininfo, info[found]);
    next = uint16_t(domctl.domain) + 1;
  }
  return found == 0 ? rc : int(found);
}

int xc_domain_max_vcpus(xc_interface* xch, uint32_t domid, unsigned int max) {
  xen_domctl_t domctl = domctl_for(XEN_DOMCTL_max_vcpus, domid);
  domctl.u.max_vcpus.max = max;
  return do_domctl(xch, domctl);
}

int xc_domain_setmaxmem(xc_interface* xch, uint32_t domid, uint64_t max_memkb) {
  xen_domctl_t domctl = domctl_for(XEN_DOMCTL_max_mem, domid);
  domctl.u.max_mem.max_memkb = max_memkb;
  return do_domctl(xch, domctl);
}

int xc_domain_set_memory_map(xc_interface* xch, uint32_t domid, struct e820entry entries[], uint32_t nr_entries) {
  if (!entries) return -1;  // as Xen's: no errno of its own
  Bounce map(xch, entries, nr_entries * sizeof(*entries), Bounce::in);
  if (map.prepare() < 0) return -1;
  xen_foreign_memory_map fmap{};
  fmap.domid = domid_t(domid);
  fmap.map.nr_entries = nr_entries;
  set_handle(fmap.map.buffer, map.address());
  long rc = do_memory_op(xch, XENMEM_set_memory_map, &fmap, sizeof(fmap));
  int saved = errno;
  map.finish();
  errno = saved;
  return int(rc);
}

int xc_domain_set_memmap_limit(xc_interface* xch, uint32_t domid, unsigned long map_limitkb) {
  e820entry entry = memmap_limit_entry(map_limitkb);
  return xc_domain_set_memory_map(xch, domid, &entry, 1);
}

int xc_domain_populate_physmap(xc_interface* xch, uint32_t domid, unsigned long nr_extents, unsigned int extent_order,
                               unsigned int mem_flags, xen_pfn_t* extent_start) {
  return int(reservation_op(xch, XENMEM_populate_physmap, domid, nr_extents, extent_order, mem_flags, extent_start));
}

int xc_domain_populate_physmap_exact(xc_interface* xch, uint32_t domid, unsigned long nr_extents,
                                     unsigned int extent_order, unsigned int mem_flags, xen_pfn_t* extent_start) {
  return exact(reservation_op(xch, XENMEM_populate_physmap, domid, nr_extents, extent_order, mem_flags, extent_start),
               nr_extents);
}

int xc_domain_increase_reservation(xc_interface* xch, uint32_t domid, unsigned long nr_extents,
                                   unsigned int extent_order, unsigned int mem_flags, xen_pfn_t* extent_start) {
  return int(
      reservation_op(xch, XENMEM_increase_reservation, domid, nr_extents, extent_order, mem_flags, extent_start));
}

int xc_domain_decrease_reservation(xc_interface* xch, uint32_t domid, unsigned long nr_extents,
                                   unsigned int extent_order, xen_pfn_t* extent_start) {
  if (!extent_start) {
    errno = EINVAL;
    return -1;
  }
  return int(reservation_op(xch, XENMEM_decrease_reservation, domid, nr_extents, extent_order, 0, extent_start));
}

int xc_domain_decrease_reservation_exact(xc_interface* xch, uint32_t domid, unsigned long nr_extents,
                                         unsigned int extent_order, xen_pfn_t* extent_start) {
  int done = xc_domain_decrease_reservation(xch, domid, nr_extents, extent_order, extent_start);
  if (done == int(nr_extents)) return 0;
  if (done >= 0) {  // Xen's: EINVAL for a partial decrease
    errno = EINVAL;
    return -1;
  }
  return done;
}

int xc_vcpu_setcontext(xc_interface* xch, uint32_t domid, uint32_t vcpu, vcpu_guest_context_any_t* ctxt) {
  return vcpu_context(xch, XEN_DOMCTL_setvcpucontext, domid, vcpu, ctxt, Bounce::in);
}

int xc_vcpu_getcontext(xc_interface* xch, uint32_t domid, uint32_t vcpu, vcpu_guest_context_any_t* ctxt) {
  return vcpu_context(xch, XEN_DOMCTL_getvcpucontext, domid, uint16_t(vcpu), ctxt, Bounce::out);
}

int xc_vcpu_getinfo(xc_interface* xch, uint32_t domid, uint32_t vcpu, xc_vcpuinfo_t* info) {
  xen_domctl_t domctl = domctl_for(XEN_DOMCTL_getvcpuinfo, domid);
  domctl.u.getvcpuinfo.vcpu = uint16_t(vcpu);
  int rc = do_domctl(xch, domctl);
  std::memcpy(info, &domctl.u.getvcpuinfo, sizeof(*info));  // as Xen's: copied whatever rc is
  return rc;
}

int xc_domain_sethandle(xc_interface* xch, uint32_t domid, xen_domain_handle_t handle) {
  xen_domctl_t domctl = domctl_for(XEN_DOMCTL_setdomainhandle, domid);
  std::memcpy(domctl.u.setdomainhandle.handle, handle, sizeof(xen_domain_handle_t));
  return do_domctl(xch, domctl);
}

// Xen's do_evtchn_op: the argument bounced both ways; a failure logged unless `silently`.
static int evtchn_op(xc_interface* xch, int cmd, void* arg, size_t size, bool silently) {
  Bounce bounce(xch, arg, size, Bounce::both);
  if (bounce.prepare() < 0) {
    perror(xch, "do_evtchn_op: bouncing arg failed");
    return -1;
  }
  long rc = hypercall(xch, __HYPERVISOR_event_channel_op, unsigned(cmd), bounce.address());
  int saved = errno;
  if (rc < 0 && !silently) error(xch, "do_evtchn_op: HYPERVISOR_event_channel_op failed: %ld", rc);
  if (bounce.finish() < 0 && rc == 0) return -1;
  errno = saved;
  return int(rc);
}

xc_evtchn_port_or_error_t xc_evtchn_alloc_unbound(xc_interface* xch, uint32_t dom, uint32_t remote_dom) {
  evtchn_alloc_unbound_t arg{};
  arg.dom = domid_t(dom);
  arg.remote_dom = domid_t(remote_dom);
  int rc = evtchn_op(xch, EVTCHNOP_alloc_unbound, &arg, sizeof(arg), false);
  return rc == 0 ? int(arg.port) : rc;
}

int xc_evtchn_status(xc_interface* xch, xc_evtchn_status_t* status) {
  return evtchn_op(xch, EVTCHNOP_status, status, sizeof(*status), true);
}

int xc_mmuext_op(xc_interface* xch, struct mmuext_op* op, unsigned int nr_ops, uint32_t dom) {
  Bounce ops(xch, op, nr_ops * sizeof(*op), Bounce::both);
  if (ops.prepare() < 0) {
    perror(xch, "Could not bounce memory for mmuext op hypercall");
    return -1;
  }
  long rc = hypercall(xch, __HYPERVISOR_mmuext_op, ops.address(), nr_ops, 0, dom);
  int saved = errno;
  ops.finish();
  errno = saved;
  return int(rc);
}

int xc_copy_to_domain_page(xc_interface* xch, uint32_t domid, unsigned long dst_pfn, const char* src_page) {
  return pvhv_xc_foreign_write(xch, domid, dst_pfn, 0, src_page, kPageBytes);
}

int xc_clear_domain_pages(xc_interface* xch, uint32_t domid, unsigned long dst_pfn, int num) {
  static const char zeroes[kPageBytes] = {};
  for (int i = 0; i < num; ++i)
    if (pvhv_xc_foreign_write(xch, domid, dst_pfn + unsigned(i), 0, zeroes, kPageBytes) < 0) return -1;
  return 0;
}

// XEN_DOMCTL_setvcpuaffinity / getvcpuaffinity: both bitmaps are xc_get_cpumap_size bytes
// (nr_bits its multiple of 8), bounced both ways for a set (the effective masks come back).
static int vcpu_affinity(xc_interface* xch, uint32_t cmd, uint32_t domid, int vcpu, xc_cpumap_t hard, xc_cpumap_t soft,
                         uint32_t flags) {
  int cpusize = xc_get_cpumap_size(xch);
  if (cpusize <= 0) {
    perror(xch, "Could not get cpumap size");
    return -1;
  }
  const Bounce::Direction direction = cmd == XEN_DOMCTL_setvcpuaffinity ? Bounce::both : Bounce::out;
  Bounce hard_bounce(xch, hard, size_t(cpusize), direction);
  Bounce soft_bounce(xch, soft, size_t(cpusize), direction);
  if (hard_bounce.prepare() < 0 || soft_bounce.prepare() < 0) {
    perror(xch, "Could not allocate hcall buffers for DOMCTL_%svcpuaffinity",
           cmd == XEN_DOMCTL_setvcpuaffinity ? "set" : "get");
    return -1;
  }
  xen_domctl_t domctl = domctl_for(cmd, domid);
  domctl.u.vcpuaffinity.vcpu = uint32_t(vcpu);
  domctl.u.vcpuaffinity.flags = flags;
  set_handle(domctl.u.vcpuaffinity.cpumap_hard.bitmap, hard_bounce.address());
  domctl.u.vcpuaffinity.cpumap_hard.nr_bits = uint32_t(cpusize) * 8;
  set_handle(domctl.u.vcpuaffinity.cpumap_soft.bitmap, soft_bounce.address());
  domctl.u.vcpuaffinity.cpumap_soft.nr_bits = uint32_t(cpusize) * 8;
  int rc = do_domctl(xch, domctl);
  int saved = errno;
  hard_bounce.finish();
  soft_bounce.finish();
  errno = saved;
  return rc;
}

int xc_vcpu_setaffinity(xc_interface* xch, uint32_t domid, int vcpu, xc_cpumap_t cpumap_hard_inout,
                        xc_cpumap_t cpumap_soft_inout, uint32_t flags) {
  return vcpu_affinity(xch, XEN_DOMCTL_setvcpuaffinity, domid, vcpu, cpumap_hard_inout, cpumap_soft_inout, flags);
}

int xc_vcpu_getaffinity(xc_interface* xch, uint32_t domid, int vcpu, xc_cpumap_t cpumap_hard, xc_cpumap_t cpumap_soft,
                        uint32_t flags) {
  return vcpu_affinity(xch, XEN_DOMCTL_getvcpuaffinity, domid, vcpu, cpumap_hard, cpumap_soft, flags);
}
