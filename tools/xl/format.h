// xl's output formats, as Xen 4.17's xl prints them (xl_info.c, xl_vcpu.c, xl_utils.c) and, for
// `xl top`, xentop's batch columns. Pure: each function returns the text; the data come from
// the daemon's answers (model.h).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pvhv::xl {

struct DomainRow {
  uint32_t domid = 0;
  std::string name;
  std::string uuid;
  bool running = false, blocked = false, paused = false, shutdown = false, crashed = false, dying = false;
  int shutdown_reason = 0;  // SHUTDOWN_* (poweroff 0, reboot 1, suspend 2, crash 3, watchdog 4, soft_reset 5)
  uint64_t mem_kb = 0;
  uint64_t max_mem_kb = 0;
  uint32_t vcpus = 0;
  uint32_t vcpus_online = 0;
  uint64_t cpu_time_ns = 0;
  int64_t start_time = 0;  // unix seconds
  std::string ptwr_mode;
};

struct VcpuRow {
  uint32_t domid = 0;
  std::string name;
  uint32_t vcpu = 0;
  uint32_t cpu = 0;
  bool online = false, running = false, blocked = false;
  uint64_t cpu_time_ns = 0;
  std::vector<uint32_t> affinity;       // the physical CPUs the vCPU may run on (hard affinity)
  std::vector<uint32_t> affinity_soft;  // those it prefers (soft affinity)
  bool has_soft = false;                // the daemon said (an older one did not: "all")
};

struct CpupoolRow {
  std::string name;
  std::vector<uint32_t> cpus;
  std::string sched;
  uint32_t n_dom = 0;
};

// `xl list`: the header, and a row with the six state letters r b p s <reason> d.
std::string list_header(bool verbose);
std::string list_row(const DomainRow& d, bool verbose);
std::string state_letters(const DomainRow& d);

// `xl vcpu-list`.
std::string vcpu_list_header();
std::string vcpu_row(const VcpuRow& v, uint32_t nr_cpus);

// `xl cpupool-list` (xl_cpupool.c's main_cpupoollist): with `cpu_list` (-c) the CPU list column.
std::string cpupool_header(bool cpu_list);
std::string cpupool_row(const CpupoolRow& pool, bool cpu_list);

// xl's print_bitmap: "all", "none", or ranges "0-2,5" over `nr_cpus` bits.
std::string cpu_bitmap(const std::vector<uint32_t>& cpus, uint32_t nr_cpus);

// `xl info`: "name<pad to 23>: value" lines in the order given; with a field, xl prints only
// the values of the lines whose name starts with it.
std::string info_text(const std::vector<std::pair<std::string, std::string>>& fields);
std::string info_filter(std::string_view text, std::string_view field);

// `xl uptime`: "N days, HH:MM:SS" (short: without seconds), the table, and the -s lines.
std::string uptime_string(uint64_t seconds, bool short_mode);
std::string uptime_header();
std::string uptime_row(const std::string& name, uint32_t domid, uint64_t seconds);
std::string uptime_short_row(const std::string& clock, const std::string& name, uint32_t domid, uint64_t seconds);

// `xl top` (xentop's columns without the network and block ones: no such devices here).
std::string top_header();
// cpu_percent: the share of one CPU used since the previous sample; total_kb: the host's memory.
std::string top_row(const DomainRow& d, double cpu_percent, uint64_t total_kb);

}  // namespace pvhv::xl
