// pvhvd: the link owner and the clients' server (tools/README.md "The daemon").
//
// One Boost.Asio event loop thread owns every piece of state (clients, records, the domain
// view, console logs); nothing else touches it, so it needs no locks. Hypervisor calls block on
// the relay (a few ms each, minutes for a domain build), so they run on a small pool of link
// threads and post their results back to the loop; the library serializes their requests on
// the one relay session, so a build's requests and a `list`'s interleave and other clients are
// answered while a build runs.
#pragma once
#include <cstdint>
#include <string>

namespace pvhv::daemon {

struct DaemonOptions {
  std::string state_dir = "/var/lib/pvhv";
  std::string attach_socket;  // empty: start the machine
  // Not empty: the link's serial connection goes through this socket instead of the machine's
  // (one that forwards to it: a test's proxy that cuts it), and the bulk window is not used.
  std::string link_via;
  std::string build_dir;
  std::string source_dir;
  std::string hypervisor = "ours";
  std::string ptwr_mode;
  std::string memory = "512M";
  unsigned smp = 1;      // the machine's CPU count (QEMU -smp N, pvhvd --smp N)
  int monitor_ms = 500;  // how often the console rings are drained
  // The domain view is read on VIRQ_DOM_EXC, and at least this often (a lost event's safety net;
  // every monitor tick when the VIRQ cannot be bound).
  int safety_poll_ms = 10000;
  int xenstore_poll_ms = 50;     // how often the domUs' xenstore rings are polled
  int open_timeout_ms = 180000;  // dom0 booting under TCG on a loaded host
  // A relay request unanswered this long is the link dropping (tools/PROTOCOL.md "The link
  // dropping"): the daemon reconnects.
  int link_timeout_ms = 300000;
  size_t console_log_bytes = 256 * 1024;  // per domain: then the log is rotated once (.1)
};

// Runs until SIGTERM/SIGINT (then dom0 is shut down and the machine stopped). Exit status.
int run_daemon(const DaemonOptions& options);

}  // namespace pvhv::daemon
