// The PV domain an xl.cfg describes, resolved as Xen 4.17's xl (parse_config_data) and libxl's
// defaults resolve it: name, type (PV only here), kernel, ramdisk, cmdline composed from
// cmdline / root / extra, memory and maxmem (MiB), vcpus and maxvcpus, cpus and cpus_soft, the on_poweroff /
// on_reboot / on_crash actions, uuid, and pvhv's own ptwr_mode. Pure: the messages xl would
// print go into `report`; a refusal carries xl's exit status.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tools/xl/config/xl_cfg.h"

namespace pvhv::xl::cfg {

// xl.cfg's `cpus` or `cpus_soft`: one CPU list for every vCPU (a string), or one per vCPU (a
// list: the i-th for vCPU i, vCPUs beyond it keep every CPU). Kept as text (cpu_range.h's
// syntax, checked here); the daemon resolves it against the host's CPUs.
struct CpuAffinity {
  bool given = false;
  bool per_vcpu = false;
  std::vector<std::string> lists;
};

struct DomainConfig {
  std::string name;
  std::string kernel;
  std::string ramdisk;
  std::string cmdline;
  long memory_mib = 0;
  long maxmem_mib = 0;
  long vcpus = 1;
  long maxvcpus = 1;
  std::string on_poweroff = "destroy";
  std::string on_reboot = "restart";
  std::string on_crash = "destroy";
  std::string uuid;       // empty: the caller generates one, as xl does
  std::string ptwr_mode;  // empty: the daemon's default
  CpuAffinity cpus;       // hard affinity
  CpuAffinity cpus_soft;  // soft affinity
};

struct Resolved {
  std::optional<DomainConfig> domain;  // absent when xl would stop
  int exit_status = 0;                 // xl's status when it stops
  std::string report;                  // warnings and errors, as xl prints them on stderr
};

// The text xl parses for `xl create FILE KEY=VALUE...`: the file, then the overrides one per
// line after a blank line (they are parsed after the file, so the last assignment wins).
std::string with_overrides(std::string_view file_text, const std::vector<std::string>& overrides);

// Parses `data` (named `source` in messages) and resolves the domain.
Resolved resolve_domain(std::string_view source, std::string_view data);

// Xen's action names for on_poweroff / on_reboot / on_crash.
bool is_shutdown_action(std::string_view name);

// libxl_uuid_from_string's format: 8-4-4-4-12 hexadecimal digits.
bool is_uuid(std::string_view text);

// The keys resolve_domain reads; any other key is ignored with one warning.
const std::vector<std::string_view>& known_keys();

}  // namespace pvhv::xl::cfg
