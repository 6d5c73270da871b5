// The `ptwr_mode` op's hypervisor calls (ptwr_mode.h), on the daemon's link threads.
extern "C" {  // Debian's xenctrl.h declares C functions without extern "C" of its own
#include <xenctrl.h>
}
#include <cerrno>

#include "tools/daemon/ptwr_mode.h"
#include "xenctrl_pvhv.h"

namespace pvhv::daemon {

namespace {
// The switch (or the query) alone: the domain's mode after it.
std::variant<unsigned, Failure> switch_ptwr_mode(xc_interface_core* xch, uint32_t domid, std::optional<unsigned> mode) {
  unsigned now = 0;
  int rc = mode ? pvhv_xc_ptwr_mode_set(xch, domid, *mode, &now) : pvhv_xc_ptwr_mode_get(xch, domid, &now);
  if (rc != 0) return ptwr_mode_failure(errno ? errno : kEio, domid);
  return now;
}
}  // namespace

// The `ptwr_mode` op's answer: the mode, and the counters that show what the switch changed.
std::variant<Json, Failure> ptwr_mode_call(xc_interface_core* xch, uint32_t domid, std::optional<unsigned> mode) {
  auto now = switch_ptwr_mode(xch, domid, mode);
  if (auto* failure = std::get_if<Failure>(&now)) return *failure;
  Json answer{{"mode", ptwr_mode_name(std::get<unsigned>(now))}};
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
  // The switch alone: a create reads no counters (four performance-counter queries, each two
  // sysctls and their buffers: about 330k instructions of dom0's relay work per `xl create`).
  auto set = switch_ptwr_mode(xch, domid, mode);
  auto* failure = std::get_if<Failure>(&set);
  if (!failure || ptwr_mode_absent_is_fine(mode_name, *failure)) return std::nullopt;
  return *failure;
}

}  // namespace pvhv::daemon
