// The trace-buffer calls (xc_tbuf_*), with Xen 4.17's behaviour: enable sets the size first and
// ignores its error (the size can be set once), get_size reads tbuf_size from the t_info page
// the hypervisor shares (on Xen, mapped; here read through the relay), set_cpu_mask sizes its
// bitmap by the number of CPUs physinfo reports.
#define __XEN_TOOLS__ 1
#include <cerrno>
#include <vector>

#include "tools/libxc/xc_private.h"
#include <xen/trace.h>

using namespace pvhv::xc;

namespace {
xen_sysctl_t tbuf_request(uint32_t cmd) {
  xen_sysctl_t sysctl{};
  sysctl.cmd = XEN_SYSCTL_tbuf_op;
  sysctl.interface_version = XEN_SYSCTL_INTERFACE_VERSION;
  sysctl.u.tbuf_op.cmd = cmd;
  return sysctl;
}

int tbuf_enable(xc_interface* xch, bool enable) {
  xen_sysctl_t sysctl = tbuf_request(enable ? XEN_SYSCTL_TBUFOP_enable : XEN_SYSCTL_TBUFOP_disable);
  return do_sysctl(xch, sysctl);
}
}  // namespace

int xc_tbuf_set_size(xc_interface* xch, unsigned long size) {
  xen_sysctl_t sysctl = tbuf_request(XEN_SYSCTL_TBUFOP_set_size);
  sysctl.u.tbuf_op.size = uint32_t(size);
  return do_sysctl(xch, sysctl);
}

int xc_tbuf_get_size(xc_interface* xch, unsigned long* size) {
  xen_sysctl_t sysctl = tbuf_request(XEN_SYSCTL_TBUFOP_get_info);
  int rc = do_sysctl(xch, sysctl);
  if (rc != 0) return rc;
  uint16_t pages = 0;  // t_info.tbuf_size: pages per CPU
  if (pvhv_xc_foreign_read(xch, DOMID_XEN, sysctl.u.tbuf_op.buffer_mfn, 0, &pages, sizeof(pages)) < 0 || pages == 0)
    return -1;
  *size = pages;
  return 0;
}

int xc_tbuf_enable(xc_interface* xch, unsigned long pages, unsigned long* mfn, unsigned long* size) {
  // As Xen: the size may already be set (it cannot change), so its error is ignored; enable
  // fails when there are no buffers at all.
  (void)xc_tbuf_set_size(xch, pages);
  if (tbuf_enable(xch, true) != 0) return -1;
  xen_sysctl_t sysctl = tbuf_request(XEN_SYSCTL_TBUFOP_get_info);
  if (do_sysctl(xch, sysctl) == 0) {
    *size = sysctl.u.tbuf_op.size;
    *mfn = sysctl.u.tbuf_op.buffer_mfn;
  }
  return 0;
}

int xc_tbuf_disable(xc_interface* xch) { return tbuf_enable(xch, false); }

int xc_tbuf_set_cpu_mask(xc_interface* xch, xc_cpumap_t mask) {
  int bytes = xc_get_cpumap_size(xch);
  if (bytes <= 0) {
    perror(xch, "Could not get number of cpus");
    return -1;
  }
  int bits = xc_get_max_cpus(xch);
  if (bits <= 0) {
    perror(xch, "Could not get number of bits");
    return -1;
  }
  Bounce bounce(xch, mask, size_t(bytes), Bounce::in);
  if (bounce.prepare() < 0) {
    perror(xch, "Could not allocate memory for xc_tbuf_set_cpu_mask hypercall");
    return -1;
  }
  xen_sysctl_t sysctl = tbuf_request(XEN_SYSCTL_TBUFOP_set_cpu_mask);
  set_handle(sysctl.u.tbuf_op.cpu_mask.bitmap, bounce.address());
  sysctl.u.tbuf_op.cpu_mask.nr_bits = uint32_t(bits);
  int rc = do_sysctl(xch, sysctl);
  int saved = errno;
  bounce.finish();
  errno = saved;
  return rc;
}

int xc_tbuf_set_evt_mask(xc_interface* xch, uint32_t mask) {
  xen_sysctl_t sysctl = tbuf_request(XEN_SYSCTL_TBUFOP_set_evt_mask);
  sysctl.u.tbuf_op.evt_mask = mask;
  return do_sysctl(xch, sysctl);
}
