// The daemon's calls into the hypervisor, over our libxenctrl on the relay session the daemon
// holds. Each is a few relay requests and blocks its caller: the daemon makes them on its link
// threads, never on the event loop (server.h). The library serializes requests on the link.
#pragma once
extern "C" {  // Debian's xenctrl.h declares C functions without extern "C" of its own
#include <xenctrl.h>
}

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tools/daemon/protocol.h"

namespace pvhv::daemon {

struct Xen {
  xc_interface* xch = nullptr;
};

// A daemon killed while sending a frame leaves the relay holding the start of it, which would
// swallow the next session's OPEN: before attaching, the cut frame is completed with bytes that
// are no frame (the relay reports it damaged and skips them) and the reports are read away.
void complete_partial_frame(const std::string& socket);
// The same in the bulk window `window` (the file QEMU shares): a daemon killed between two
// writes of one frame into the ring to dom0 leaves the start of it there. The completing bytes
// go through the ring, dom0's reports in the ring to the host are dropped, and the window is then
// as good as new for the next session. Nothing happens if dom0 does not serve the window.
void complete_partial_frame_in_window(const std::string& window);

// Opens the relay session on `socket` (waiting up to `timeout_ms` for dom0 to serve), through
// the bulk window file `window` when it is not empty (tools/PROTOCOL.md "The bulk window").
// `request_timeout_ms`: a request unanswered this long drops the link (the session is kept
// across drops: pvhv_xc_link_keep, and the daemon reopens it).
bool open_link(Xen& xen, const std::string& socket, const std::string& window, int timeout_ms, int request_timeout_ms,
               std::string& why);

std::variant<std::vector<xc_domaininfo_t>, Failure> domain_list(Xen& xen);
std::variant<Json, Failure> host_info(Xen& xen);
struct VersionInfo {
  std::string hypervisor;  // "pvhv", "xen-4.17"
  std::string version;     // "4.17-pvhv", "4.17.5"
};
VersionInfo version_info(Xen& xen);
std::variant<std::string, Failure> read_console(Xen& xen, bool clear);
// Each vCPU of the domains: xc_vcpu_getinfo and its hard and soft affinity (CPU numbers).
std::variant<Json, Failure> vcpu_list(Xen& xen, const std::vector<std::pair<uint32_t, std::string>>& domains);
// xc_vcpu_setaffinity of one vCPU (an absent mask is left alone): the effective masks
// ({vcpu, hard, soft}) the hypervisor answered.
std::variant<Json, Failure> set_vcpu_affinity(Xen& xen, uint32_t domid, uint32_t vcpu,
                                              const std::optional<std::vector<uint32_t>>& hard,
                                              const std::optional<std::vector<uint32_t>>& soft);
// xl cpupool-list's one pool: [{id, name, sched, cpus, n_dom}].
std::variant<Json, Failure> cpupool_list(Xen& xen);
// xl.cfg's cpus / cpus_soft after max_vcpus (libxl__build_pre): each vCPU a list names, both
// masks in one call; a failure names the vCPU as libxl's message does.
std::optional<Failure> apply_config_affinity(Xen& xen, uint32_t domid, uint32_t max_vcpus, const CpuAffinityText& hard,
                                             const CpuAffinityText& soft);

// A failed libxenctrl call as an answer: errno and "what: strerror".
Failure xc_failure(const std::string& what);

}  // namespace pvhv::daemon
