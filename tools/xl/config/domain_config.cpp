// Resolving an xl.cfg into a PV domain (see domain_config.h), in the order Xen 4.17's xl reads
// the keys, so that its messages come in its order.
#include "tools/xl/config/domain_config.h"

#include "tools/xl/config/cpu_range.h"

#include <cstring>
#include <set>

namespace pvhv::xl::cfg {

namespace {

// Xen's matching of `type`: the value is a prefix of the type's name ("" and "h" are hvm).
bool prefix_of(std::string_view value, std::string_view type) {
  return std::strncmp(std::string(value).c_str(), std::string(type).c_str(), value.size()) == 0;
}

struct Stop {
  int exit_status;
};

class Resolver {
 public:
  explicit Resolver(const Config& config, std::string& report) : config_(config), report_(report) {}

  DomainConfig run() {
    DomainConfig d;
    type();
    if (get_string(config_, "name", d.name, report_) != Lookup::kFound) stop("Domain name must be specified.\n");
    if (get_string(config_, "uuid", d.uuid, report_) == Lookup::kFound && !is_uuid(d.uuid))
      stop("Failed to parse UUID: " + d.uuid + "\n");
    long value = 0;
    const bool memory = get_long(config_, "memory", value, report_) == Lookup::kFound;
    if (memory) d.memory_mib = value;
    const bool maxmem = get_long(config_, "maxmem", value, report_) == Lookup::kFound;
    if (maxmem) d.maxmem_mib = value;
    long vcpus = 0;
    if (get_long(config_, "vcpus", value, report_) == Lookup::kFound) vcpus = value;
    long maxvcpus = 0;
    if (get_long(config_, "maxvcpus", value, report_) == Lookup::kFound) maxvcpus = value;
    // xl: maxmem defaults to memory, maxvcpus to vcpus; libxl: 32 MiB and one vCPU.
    if (!maxmem) d.maxmem_mib = memory ? d.memory_mib : 32;
    if (!memory) d.memory_mib = d.maxmem_mib;
    if (maxvcpus == 0) maxvcpus = vcpus;
    if (maxvcpus < vcpus) stop("xl: maxvcpus < vcpus\n");
    d.vcpus = vcpus > 0 ? vcpus : 1;
    d.maxvcpus = maxvcpus > 0 ? maxvcpus : 1;
    d.cpus = affinity("cpus", d.maxvcpus);
    d.cpus_soft = affinity("cpus_soft", d.maxvcpus);
    if (d.memory_mib <= 0 || d.maxmem_mib <= 0) stop("xl: memory and maxmem must be at least 1 MiB\n");
    d.on_poweroff = action("on_poweroff", "destroy");
    d.on_reboot = action("on_reboot", "restart");
    d.on_crash = action("on_crash", "destroy");
    get_string(config_, "kernel", d.kernel, report_);
    get_string(config_, "ramdisk", d.ramdisk, report_);
    d.cmdline = cmdline();
    if (get_string(config_, "ptwr_mode", d.ptwr_mode, report_) == Lookup::kFound && d.ptwr_mode != "emulate" &&
        d.ptwr_mode != "writable" && d.ptwr_mode != "adaptive")
      stop("Invalid ptwr_mode \"" + d.ptwr_mode + "\" specified (emulate, writable or adaptive)\n");
    warn_unknown_keys();
    return d;
  }

 private:
  [[noreturn]] void stop(const std::string& message, int exit_status = 1) {
    report_ += message;
    throw Stop{exit_status};
  }

  // Only PV guests: hvm and pvh are valid Xen types that this hypervisor does not run.
  void type() {
    std::string t;
    if (get_string(config_, "type", t, report_) != Lookup::kFound) return;
    if (prefix_of(t, "hvm")) stop("xl: type=hvm is not supported here: pvhv runs PV guests only\n");
    if (prefix_of(t, "pv")) return;
    if (prefix_of(t, "pvh")) stop("xl: type=pvh is not supported here: pvhv runs PV guests only\n");
    stop("Invalid domain type " + t + ".\n");
  }

  std::string action(const char* key, const char* fallback) {
    std::string value;
    if (get_string(config_, key, value, report_) != Lookup::kFound) value = fallback;
    if (!is_shutdown_action(value)) stop(std::string("Unknown ") + key + " action \"" + value + "\" specified\n");
    return value;
  }

  // xl's parse_vcpu_affinity: a string for every vCPU, or a list with one string per vCPU
  // (entries beyond maxvcpus ignored); a list of the wrong shape or a bad range stops xl.
  CpuAffinity affinity(const char* key, long maxvcpus) {
    CpuAffinity a;
    const Setting* setting = config_.find(key);
    if (!setting) return a;
    a.given = true;
    std::string error;
    auto check = [&](const std::string& text) {
      if (!parse_cpu_range(text, kMaxCpusForSyntax, error)) stop(error + "\n");
    };
    if (!setting->value.is_list()) {
      check(setting->value.string);
      a.lists.push_back(setting->value.string);
      return a;
    }
    a.per_vcpu = true;
    for (const Value& item : setting->value.list) {
      if (long(a.lists.size()) >= maxvcpus) break;
      if (item.is_list()) stop(std::string("Unable to parse ") + key + " list\n");
      check(item.string);
      a.lists.push_back(item.string);
    }
    return a;
  }

  // xl's composition: cmdline wins over root= and extra=, which make "root=R E".
  std::string cmdline() {
    std::string line, root, extra;
    const bool has_line = get_string(config_, "cmdline", line, report_) == Lookup::kFound;
    const bool has_root = get_string(config_, "root", root, report_) == Lookup::kFound;
    const bool has_extra = get_string(config_, "extra", extra, report_) == Lookup::kFound;
    if (has_line) {
      if (has_root || has_extra) report_ += "Warning: ignoring root= and extra= in favour of cmdline=\n";
      return line;
    }
    if (has_root && has_extra) return "root=" + root + " " + extra;
    if (has_root) return "root=" + root;
    return extra;
  }

  // Xen ignores keys it does not know silently; we say so once per key, at its first line.
  void warn_unknown_keys() {
    std::set<std::string> warned;
    for (const Setting& s : config_.settings) {
      bool known = false;
      for (std::string_view k : known_keys()) known = known || k == s.name;
      if (known || !warned.insert(s.name).second) continue;
      report_ += config_.source + ":" + std::to_string(s.line) + ": warning: ignoring unknown key `" + s.name + "'\n";
    }
  }

  const Config& config_;
  std::string& report_;
};

bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

}  // namespace

const std::vector<std::string_view>& known_keys() {
  static const std::vector<std::string_view> keys = {
      "name",  "type",     "kernel",      "ramdisk",   "cmdline",  "root", "extra",     "memory", "maxmem",
      "vcpus", "maxvcpus", "on_poweroff", "on_reboot", "on_crash", "uuid", "ptwr_mode", "cpus",   "cpus_soft"};
  return keys;
}

bool is_shutdown_action(std::string_view name) {
  static const char* const actions[] = {"destroy",          "restart",          "restart-rename", "preserve",
                                        "coredump-destroy", "coredump-restart", "soft-reset"};
  for (const char* a : actions)
    if (name == a) return true;
  return false;
}

bool is_uuid(std::string_view text) {
  if (text.size() != 36) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? text[i] != '-' : !is_hex(text[i])) return false;
  }
  return true;
}

std::string with_overrides(std::string_view file_text, const std::vector<std::string>& overrides) {
  std::string text(file_text);
  if (overrides.empty()) return text;
  text += "\n";
  for (const std::string& o : overrides) text += o + "\n";
  text += "\n";
  return text;
}

Resolved resolve_domain(std::string_view source, std::string_view data) {
  Resolved r;
  ParseResult parsed = parse(source, data);
  r.report = parsed.report;
  if (!parsed.ok()) {
    r.report += std::string("Failed to parse config: ") + std::strerror(parsed.error) + "\n";
    r.exit_status = 1;
    return r;
  }
  try {
    r.domain = Resolver(parsed.config, r.report).run();
  } catch (const Stop& s) {
    r.exit_status = s.exit_status;
  }
  return r;
}

}  // namespace pvhv::xl::cfg
