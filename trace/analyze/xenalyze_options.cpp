#include "trace/analyze/xenalyze_options.h"

#include <cerrno>
#include <cstdlib>

#include "trace/analyze/cpu_hz.h"

namespace trace {

const char* xenalyze_usage() {
  return "usage: xenalyze [options] TRACE\n"
         "       xenalyze [options] --compare A B\n"
         "  --summary            xenalyze's summary: volume per class, runstates, PV events\n"
         "  --dump-all           one line per record, in analysis order\n"
         "  --cpu-hz=HZ          TSC frequency (suffix G, M or K), overrides the trace's\n"
         "  --report-pcpu        running / idle / lost time per physical CPU\n"
         "  --stats              counts, rates and paired costs of every event type\n"
         "  --json               everything as one JSON document (--json-steps adds fork steps)\n"
         "  --forks              per-operation stories (faults, emulations, unhooks, rehooks...)\n"
         "  --ptes-per-table     histogram of PTEs changed per unhooked page-table page\n"
         "  --per-iteration      the sequence of each iteration of a loop the guest marks with\n"
         "                       physdev_op hypercalls (--domain=N, default 1): typical, average\n"
         "  --svg=DIR            SVG plots: fork timeline (--fork=N), histogram, cost by mode\n"
         "  --compare A B        two traces side by side\n"
         "  --strict             exit status 3 when the trace had errors\n"
         "  --verbose            also print informational diagnostics and analysis notes\n";
}

namespace {

bool takes_value(const std::string& name) {
  return name == "--cpu-hz" || name == "--svg" || name == "--fork" || name == "--domain";
}

bool apply_flag(XenalyzeOptions& o, const std::string& name) {
  if (name == "--summary" || name == "-s")
    o.summary = true;
  else if (name == "--dump-all" || name == "-a")
    o.dump_all = true;
  else if (name == "--report-pcpu")
    o.report_pcpu = true;
  else if (name == "--json")
    o.json = true;
  else if (name == "--json-steps")
    o.json = o.json_steps = true;
  else if (name == "--forks")
    o.forks = true;
  else if (name == "--ptes-per-table")
    o.ptes_per_table = true;
  else if (name == "--stats")
    o.stats = true;
  else if (name == "--per-iteration")
    o.per_iteration = true;
  else if (name == "--verbose" || name == "-v")
    o.verbose = true;
  else if (name == "--strict")
    o.strict = true;
  else if (name == "--compare")
    o.compare = true;
  else
    return false;
  return true;
}

bool apply_value(XenalyzeOptions& o, const std::string& name, const std::string& value, std::string& error) {
  if (name == "--cpu-hz") {
    o.cpu_hz = parse_cpu_hz(value);
    if (!o.cpu_hz)
      error =
          "invalid --cpu-hz '" + value + "' (a decimal number with an optional G, M or K suffix, from 1 kHz to 1 THz)";
    return bool(o.cpu_hz);
  }
  if (name == "--svg") {
    o.svg_dir = value;
    return !value.empty() || (error = "--svg needs a directory", false);
  }
  // Decimal digits only: strtoull would take "-1" as 2^64 - 1 and saturate on overflow.
  bool digits = !value.empty() && value.find_first_not_of("0123456789") == std::string::npos;
  errno = 0;
  uint64_t index = digits ? std::strtoull(value.c_str(), nullptr, 10) : 0;
  if (name == "--domain") {
    // A domain id: 0..DOMID_FIRST_RESERVED - 1 (0x7ff0), as Xen's domids.
    if (!digits || errno == ERANGE || index >= 0x7ff0) {
      error = "invalid --domain '" + value + "' (a domain id, 0 to 32751)";
      return false;
    }
    o.domain = uint32_t(index);
    return true;
  }
  if (!digits || errno == ERANGE) {
    error = "invalid --fork '" + value + "' (the number of a marked operation, from 0)";
    return false;
  }
  o.fork_index = index;
  return true;
}

}  // namespace

std::optional<XenalyzeOptions> parse_xenalyze_options(const std::vector<std::string>& args, std::string& error) {
  XenalyzeOptions o;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h") {
      error = xenalyze_usage();
      return std::nullopt;
    }
    if (arg.size() < 2 || arg[0] != '-') {
      o.files.push_back(arg);
      continue;
    }
    size_t eq = arg.find('=');
    std::string name = arg.substr(0, eq);
    if (takes_value(name)) {
      std::string value;
      if (eq != std::string::npos)
        value = arg.substr(eq + 1);
      else if (i + 1 < args.size())
        value = args[++i];
      else {
        error = name + " needs a value";
        return std::nullopt;
      }
      if (!apply_value(o, name, value, error)) return std::nullopt;
    } else if (eq != std::string::npos || !apply_flag(o, name)) {
      error = "unknown option " + arg + "\n" + xenalyze_usage();
      return std::nullopt;
    }
  }
  size_t wanted = o.compare ? 2 : 1;
  if (o.files.size() != wanted) {
    error = std::string(o.compare ? "--compare needs two trace files" : "need exactly one trace file") + "\n" +
            xenalyze_usage();
    return std::nullopt;
  }
  if (!o.summary && !o.dump_all && !o.report_pcpu && !o.json && !o.forks && !o.ptes_per_table && !o.stats &&
      !o.svg_dir && !o.compare && !o.per_iteration)
    o.summary = true;
  return o;
}

}  // namespace trace
