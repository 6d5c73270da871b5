// pvhvd's `ptwr_mode` op and xl.cfg's `ptwr_mode=` (tools/PROTOCOL.md): a domain's page-table
// write mode on our hypervisor, through pvhv_xc_ptwr_mode_get / _set (xenctrl_pvhv.h). The
// request's rules and the answers' words are pure (ptwr_mode.cpp, unit-tested); the calls run
// on the daemon's link threads (ptwr_mode_link.cpp).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include "tools/daemon/protocol.h"

struct xc_interface_core;

namespace pvhv::daemon {

// The mode by its name ("emulate", "writable", "adaptive") and back.
std::optional<unsigned> ptwr_mode_from_name(const std::string& name);
const char* ptwr_mode_name(unsigned mode);

// The request's `mode`: absent or null reads the mode, a name sets it; anything else EINVAL.
std::variant<std::optional<unsigned>, Failure> ptwr_mode_argument(const Json& body);

// A failed call's answer: Xen 4.17's ENOSYS in words a user understands (the mode is ours),
// the others as the domctl's errno says.
Failure ptwr_mode_failure(int error, uint32_t domid);

// xl.cfg's ptwr_mode= where the hypervisor has no such control (Xen 4.17, ENOSYS): "emulate"
// is what that hypervisor does anyway, so the create goes on; "writable" cannot be honoured.
bool ptwr_mode_absent_is_fine(const std::string& mode_name, const Failure& failure);

// On a link thread, at create (after createdomain, before the build): the config's mode.
std::optional<Failure> apply_config_ptwr_mode(xc_interface_core* xch, uint32_t domid, const std::string& mode_name);

// On a link thread: sets the mode when `mode` is given, then answers {mode, counters}: the
// hypervisor's ptwr counters (ptwr_emulations, ptwr_faults, ptwr_unhooks, ptwr_rehooks) as
// they are after it, machine-wide, where the hypervisor has them.
std::variant<Json, Failure> ptwr_mode_call(xc_interface_core* xch, uint32_t domid, std::optional<unsigned> mode);

}  // namespace pvhv::daemon
