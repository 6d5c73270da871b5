// libxl's createdomain settings for a PV domU, shared by every toolstack-side creator (the
// daemon, the issue 9 programs): one place that says what a PV domain asks of the hypervisor.
#include <cstring>

#include "tools/libxc/xc_api.h"
// Exported: what pvhv_xenguest.h declares, nothing else.
#pragma GCC visibility push(default)
#include "tools/libxenguest/include/pvhv_xenguest.h"
#pragma GCC visibility pop

void pvhv_pv_createdomain_defaults(xen_domctl_createdomain* config) {
  std::memset(config, 0, sizeof *config);
  config->max_vcpus = 1;
  config->max_evtchn_port = 1023;
  config->max_grant_frames = 64;
  config->max_maptrack_frames = 1024;
  config->grant_opts = XEN_DOMCTL_GRANT_version(1);
}
