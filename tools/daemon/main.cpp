// build/bin/pvhvd: the daemon that owns the machine (tools/README.md "The daemon").
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "tools/daemon/daemon.h"

namespace {

void usage() {
  std::fprintf(
      stderr,
      "usage: pvhvd [--state-dir DIR] [--attach SOCKET] [--hypervisor ours|xen417] [--ptwr emulate|writable|adaptive]\n"
      "             [--memory SIZE] [--smp N] [--build DIR] [--monitor-ms N] [--safety-poll-ms N]\n"
      "             [--link-timeout-ms N] [--link-via SOCKET] [--xenstore-poll-ms N]\n");
}

}  // namespace

int main(int argc, char** argv) {
  pvhv::daemon::DaemonOptions options;
  options.build_dir = PVHV_BUILD_DIR;
  options.source_dir = PVHV_SOURCE_DIR;
  if (const char* dir = std::getenv("PVHV_STATE_DIR")) options.state_dir = dir;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        usage();
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--state-dir")
      options.state_dir = value();
    else if (arg == "--attach")
      options.attach_socket = value();
    else if (arg == "--hypervisor")
      options.hypervisor = value();
    else if (arg == "--ptwr")
      options.ptwr_mode = value();
    else if (arg == "--memory")
      options.memory = value();
    else if (arg == "--smp") {
      const std::string text = value();
      char* end = nullptr;
      const unsigned long n = std::strtoul(text.c_str(), &end, 10);
      if (end == text.c_str() || *end || n < 1 || n > 8) {  // QEMU's -smp as the hypervisor takes it (MAX_CPUS 8)
        std::fprintf(stderr, "pvhvd: --smp must be 1 to 8\n");
        return 2;
      }
      options.smp = unsigned(n);
    } else if (arg == "--build")
      options.build_dir = value();
    else if (arg == "--monitor-ms")
      options.monitor_ms = std::atoi(value().c_str());
    else if (arg == "--safety-poll-ms")
      options.safety_poll_ms = std::atoi(value().c_str());
    else if (arg == "--link-timeout-ms")
      options.link_timeout_ms = std::atoi(value().c_str());
    else if (arg == "--link-via")
      options.link_via = value();
    else if (arg == "--xenstore-poll-ms")
      options.xenstore_poll_ms = std::atoi(value().c_str());
    else {
      usage();
      return 2;
    }
  }
  if ((options.hypervisor != "ours" && options.hypervisor != "xen417") ||
      (!options.ptwr_mode.empty() && options.ptwr_mode != "emulate" && options.ptwr_mode != "writable" &&
       options.ptwr_mode != "adaptive") ||
      options.monitor_ms <= 0 || options.safety_poll_ms <= 0 || options.link_timeout_ms <= 0 ||
      options.xenstore_poll_ms <= 0) {
    usage();
    return 2;
  }
  if (options.hypervisor == "xen417" && !options.ptwr_mode.empty()) {
    std::fprintf(stderr, "pvhvd: --ptwr is ours only (Xen 4.17 has no ptwr= option)\n");
    return 2;
  }
  return pvhv::daemon::run_daemon(options);
}
