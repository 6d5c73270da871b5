// The `ptwr_mode` op's hypervisor calls (ptwr_mode.h), on the daemon's link threads.
extern "C" {  // Debian's xenctrl.h declares C functions without extern "C" of its own
#include <xenctrl.h>
}
#include <cerrno>

#include "tools/daemon/ptwr_mode.h"
#include "xenctrl_pvhv.h"

namespace pvhv::daemon {

std::variant<Json, Failure> ptwr_mode_call(xc_interface_core* xch, uint32_t domid, std::optional<unsigned> mode) {
  unsigned now = 0;
  int rc = mode ? pvhv_xc_ptwr_mode_set(xch, domid, *mode, &now) : pvhv_xc_ptwr_mode_get(xch, domid, &now);
  if (rc != 0) return ptwr_mode_failure(errno ? errno : kEio, domid);
  Json answer{{"mode", ptwr_mode_name(now)}};
  Json counters = Json::object();
  for (const char* name : {"ptwr_emulations", "ptwr_faults", "ptwr_unhooks", "ptwr_rehooks"}) {
    uint64_t value = 0;
    if (pvhv_xc_perfc_value(xch, name, &value) == 0) counters[name] = value;
  }
  answer["counters"] = counters;
  return answer;
}

std::optional<Failure> apply_config_ptwr_mode(xc_interface_core* xch, uint32_t domid, const std::string& mode_name) {
  auto mode = ptwr_mode_from_name(mode_name);
  if (!mode) return Failure{kEinval, "ptwr_mode must be emulate, writable or adaptive"};
  auto set = ptwr_mode_call(xch, domid, mode);
  auto* failure = std::get_if<Failure>(&set);
  if (!failure || ptwr_mode_absent_is_fine(mode_name, *failure)) return std::nullopt;
  return *failure;
}

}  // namespace pvhv::daemon
