#include "tools/daemon/machine_clock.h"

extern "C" {  // Debian's xenctrl.h declares C functions without extern "C" of its own
#include <xenctrl.h>
}
#include <cstddef>

#include "xenctrl_pvhv.h"

namespace pvhv::daemon {

namespace {
// dom0's own frame, so DOMID_SELF: naming itself is -ESRCH (Xen's get_pg_owner).
int read_shared_info(xc_interface_core* xch, uint64_t frame, uint32_t offset, void* out, size_t length) {
  return pvhv_xc_foreign_read(xch, DOMID_SELF, frame, offset, out, length);
}
}  // namespace

std::optional<uint64_t> hypervisor_system_time_ns(xc_interface_core* xch) {
  xc_domaininfo_t dom0{};
  if (xc_domain_getinfolist(xch, 0, 1, &dom0) != 1 || dom0.domain != 0) return std::nullopt;
  constexpr uint32_t kOffset = offsetof(shared_info_t, vcpu_info[0].time);
  // Xen's version protocol: odd while the hypervisor updates it, changed when it did meanwhile.
  // Each read is a relay round trip, and dom0's time is rewritten at every event it takes, so
  // on a loaded host (CI's tests two at a time) the two reads often straddle an update: eight
  // attempts were seen to miss every time.
  for (int attempt = 0; attempt < 64; ++attempt) {
    vcpu_time_info_t time{};
    if (read_shared_info(xch, dom0.shared_info_frame, kOffset, &time, sizeof(time)) != 0) return std::nullopt;
    uint32_t version = 0;
    if (read_shared_info(xch, dom0.shared_info_frame, kOffset, &version, sizeof(version)) != 0) return std::nullopt;
    if ((time.version & 1) == 0 && version == time.version) return time.system_time;
  }
  return std::nullopt;
}

}  // namespace pvhv::daemon
