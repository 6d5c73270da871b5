// Command line of build/bin/xenalyze. Option names follow Xen's xenalyze where it has them
// (--summary, --dump-all, --cpu-hz, --report-pcpu); the rest are ours.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace trace {

struct XenalyzeOptions {
  bool summary = false;
  bool dump_all = false;
  bool report_pcpu = false;
  bool json = false;
  bool json_steps = false;
  bool forks = false;
  bool ptes_per_table = false;
  bool stats = false;
  bool verbose = false;
  bool strict = false;
  std::optional<uint64_t> cpu_hz;
  std::optional<std::string> svg_dir;
  std::optional<uint64_t> fork_index;  // --fork=N (default: the first marked operation)
  bool per_iteration = false;          // --per-iteration: a loop the guest marks with physdev_op
  uint32_t domain = 1;                 // --domain=N: whose loop (default the first domU)
  std::vector<std::string> files;      // one trace, or two with --compare
  bool compare = false;
};

// Parses argv. On error returns nullopt and sets `error`; `--help` sets `error` to the usage.
std::optional<XenalyzeOptions> parse_xenalyze_options(const std::vector<std::string>& args, std::string& error);
const char* xenalyze_usage();

}  // namespace trace
