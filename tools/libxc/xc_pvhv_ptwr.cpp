// pvhv's own calls beside libxenctrl's (xenctrl_pvhv.h): a domain's page-table write mode
// (the ptwr-mode domctl of common/xen/pvhv_domctl.h) and a performance counter by name.
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "common/xen/pvhv_domctl.h"
#include "tools/libxc/xc_private.h"

using namespace pvhv::xc;
namespace abi = pvhv::xen_abi;

namespace {
int ptwr_mode_domctl(xc_interface* xch, uint32_t domid, uint32_t op, unsigned mode, unsigned* answer) {
  xen_domctl_t domctl{};
  domctl.cmd = abi::kDomctlPtwrMode;
  domctl.domain = domid_t(domid);
  abi::DomctlPtwrMode body{op, mode, {0, 0}};
  static_assert(sizeof(body) <= sizeof(domctl.u.pad));
  std::memcpy(domctl.u.pad, &body, sizeof(body));
  int rc = do_domctl(xch, domctl);
  if (rc != 0) return rc;
  std::memcpy(&body, domctl.u.pad, sizeof(body));
  if (answer) *answer = body.mode;
  return 0;
}

xen_sysctl_t perfc_request() {
  xen_sysctl_t sysctl{};
  sysctl.cmd = XEN_SYSCTL_perfc_op;
  sysctl.u.perfc_op.cmd = XEN_SYSCTL_PERFCOP_query;
  return sysctl;
}
}  // namespace

int pvhv_xc_ptwr_mode_get(xc_interface* xch, uint32_t domid, unsigned int* mode) {
  return ptwr_mode_domctl(xch, domid, abi::kPtwrModeGet, 0, mode);
}

int pvhv_xc_ptwr_mode_set(xc_interface* xch, uint32_t domid, unsigned int mode, unsigned int* now) {
  return ptwr_mode_domctl(xch, domid, abi::kPtwrModeSet, mode, now);
}

int pvhv_xc_ptwr_reads_unhooked_set(xc_interface* xch, uint32_t domid, unsigned int reads) {
  return ptwr_mode_domctl(xch, domid, abi::kPtwrReadsUnhookedSet, reads, nullptr);
}

// Xen's xc_perfc_query_number then xc_perfc_query: the sizes first, then both arrays bounced out.
int pvhv_xc_perfc_value(xc_interface* xch, const char* name, uint64_t* value) {
  xen_sysctl_t sizes = perfc_request();
  if (do_sysctl(xch, sizes) != 0) return -1;
  std::vector<xen_sysctl_perfc_desc_t> desc(sizes.u.perfc_op.nr_counters);
  std::vector<xen_sysctl_perfc_val_t> val(sizes.u.perfc_op.nr_vals);
  Bounce desc_bounce(xch, desc.data(), desc.size() * sizeof(desc[0]), Bounce::out);
  Bounce val_bounce(xch, val.data(), val.size() * sizeof(val[0]), Bounce::out);
  if (desc_bounce.prepare() < 0 || val_bounce.prepare() < 0) return -1;
  xen_sysctl_t query = perfc_request();
  set_handle(query.u.perfc_op.desc, desc_bounce.address());
  set_handle(query.u.perfc_op.val, val_bounce.address());
  int rc = do_sysctl(xch, query);
  int saved = errno;
  if ((desc_bounce.finish() < 0 || val_bounce.finish() < 0) && rc == 0) return -1;
  errno = saved;
  if (rc != 0) return rc;
  size_t next = 0;
  for (const auto& d : desc) {
    uint64_t sum = 0;
    for (uint32_t i = 0; i < d.nr_vals && next < val.size(); ++i) sum += val[next++];
    if (std::strncmp(d.name, name, sizeof(d.name)) == 0) {
      *value = sum;
      return 0;
    }
  }
  errno = ENOENT;
  return -1;
}
