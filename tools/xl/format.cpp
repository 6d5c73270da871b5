// xl's output formats (see format.h). The widths and letters are Xen 4.17's; the times go
// through a float as xl's `(float)cpu_time / 1e9` does, so the rounding is the same.
#include "tools/xl/format.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>

namespace pvhv::xl {

namespace {

std::string printf_string(const char* format, ...) __attribute__((format(printf, 1, 2)));
std::string printf_string(const char* format, ...) {
  va_list ap;
  va_start(ap, format);
  va_list copy;
  va_copy(copy, ap);
  const int n = std::vsnprintf(nullptr, 0, format, copy);
  va_end(copy);
  std::string out(n > 0 ? n : 0, '\0');
  if (n > 0) std::vsnprintf(out.data(), out.size() + 1, format, ap);
  va_end(ap);
  return out;
}

double seconds_of(uint64_t ns) { return static_cast<float>(ns) / 1e9; }

// xl's letters for shutdown reasons, indexed by SHUTDOWN_*; '?' beyond them.
char reason_letter(int reason) {
  static const char letters[] = "-rscwS";
  return reason >= 0 && reason < static_cast<int>(sizeof(letters) - 1) ? letters[reason] : '?';
}

constexpr int kShutdownCrash = 3;

}  // namespace

std::string list_header(bool verbose) {
  std::string h = "Name                                        ID   Mem VCPUs\tState\tTime(s)";
  if (verbose) h += "   UUID                            Reason-Code\tSecurity Label";
  return h + "\n";
}

// A crashed domain is a shut-down one with reason crash, as Xen's domain flags say.
std::string state_letters(const DomainRow& d) {
  const bool shutdown = d.shutdown || d.crashed;
  const int reason = d.crashed ? kShutdownCrash : (shutdown ? d.shutdown_reason : 0);
  std::string s;
  s += d.running ? 'r' : '-';
  s += d.blocked ? 'b' : '-';
  s += d.paused ? 'p' : '-';
  s += shutdown ? 's' : '-';
  s += reason_letter(reason);
  s += d.dying ? 'd' : '-';
  return s;
}

std::string list_row(const DomainRow& d, bool verbose) {
  // A domain with no name (one the daemon has no record of, e.g. between its shutdown and its
  // destruction) prints as Xen's xl prints a null libxl_domid_to_name: glibc's "(null)".
  const char* name = d.name.empty() ? "(null)" : d.name.c_str();
  std::string row = printf_string("%-40s %5d %5lu %5d     %s  %8.1f", name, static_cast<int>(d.domid),
                                  static_cast<unsigned long>(d.mem_kb / 1024), static_cast<int>(d.vcpus_online),
                                  state_letters(d).c_str(), seconds_of(d.cpu_time_ns));
  if (verbose) {
    row += " " + d.uuid;
    const bool shutdown = d.shutdown || d.crashed;
    row +=
        shutdown ? printf_string(" %8x", d.crashed ? kShutdownCrash : d.shutdown_reason) : printf_string(" %8s", "-");
    row += printf_string(" %16s", "-");
  }
  return row + "\n";
}

std::string vcpu_list_header() {
  return printf_string("%-32s %5s %5s %5s %5s %9s %s\n", "Name", "ID", "VCPU", "CPU", "State", "Time(s)",
                       "Affinity (Hard / Soft)");
}

std::string vcpu_row(const VcpuRow& v, uint32_t nr_cpus) {
  std::string row = printf_string("%-32s %5u %5u", v.name.c_str(), v.domid, v.vcpu);
  if (!v.online)
    row += printf_string("%5c %3c%cp ", '-', '-', '-');
  else
    row += printf_string("%5u %3c%c- ", v.cpu, v.running ? 'r' : '-', v.blocked ? 'b' : '-');
  row += printf_string("%9.1f  ", seconds_of(v.cpu_time_ns));
  std::vector<uint32_t> all;
  for (uint32_t c = 0; c < nr_cpus; ++c) all.push_back(c);
  return row + cpu_bitmap(v.affinity, nr_cpus) + " / " + cpu_bitmap(v.has_soft ? v.affinity_soft : all, nr_cpus) + "\n";
}

std::string cpupool_header(bool cpu_list) {
  return printf_string("%-19s", "Name") + (cpu_list ? "CPU list\n" : "CPUs   Sched     Active   Domain count\n");
}

std::string cpupool_row(const CpupoolRow& pool, bool cpu_list) {
  std::string row = printf_string("%-19s", pool.name.c_str());
  if (cpu_list) {
    for (size_t i = 0; i < pool.cpus.size(); ++i) row += (i ? "," : "") + std::to_string(pool.cpus[i]);
  } else {
    row += printf_string("%3d %9s       y       %4d", static_cast<int>(pool.cpus.size()), pool.sched.c_str(),
                         static_cast<int>(pool.n_dom));
  }
  return row + "\n";
}

std::string cpu_bitmap(const std::vector<uint32_t>& cpus, uint32_t nr_cpus) {
  auto set = [&](uint32_t c) { return std::find(cpus.begin(), cpus.end(), c) != cpus.end(); };
  std::string out;
  bool any = false;
  uint32_t c = 0;
  while (c < nr_cpus) {
    if (!set(c)) {
      ++c;
      continue;
    }
    uint32_t end = c;
    while (end + 1 < nr_cpus && set(end + 1)) ++end;
    if (c == 0 && end + 1 == nr_cpus) return "all";
    out += (any ? "," : "") + std::to_string(c);
    if (end > c) out += "-" + std::to_string(end);
    any = true;
    c = end + 1;
  }
  return any ? out : "none";
}

std::string info_text(const std::vector<std::pair<std::string, std::string>>& fields) {
  std::string out;
  for (const auto& [name, value] : fields) {
    // virt_caps is printed as ":" followed by " cap" words: nothing after the colon if none.
    if (value.empty() && name == "virt_caps")
      out += printf_string("%-23s:\n", name.c_str());
    else
      out += printf_string("%-23s: %s\n", name.c_str(), value.c_str());
  }
  return out;
}

std::string info_filter(std::string_view text, std::string_view field) {
  std::string out;
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    const std::string_view line = text.substr(0, eol == std::string_view::npos ? text.size() : eol + 1);
    text.remove_prefix(line.size());
    if (line.substr(0, field.size()) != field) continue;
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon + 1 >= line.size() || line[colon + 1] != ' ') continue;
    out += line.substr(colon + 2);
  }
  return out;
}

std::string uptime_string(uint64_t seconds, bool short_mode) {
  const int day = static_cast<int>(seconds / 86400);
  seconds -= static_cast<uint64_t>(day) * 86400;
  const int hour = static_cast<int>(seconds / 3600);
  seconds -= static_cast<uint64_t>(hour) * 3600;
  const int min = static_cast<int>(seconds / 60);
  const int sec = static_cast<int>(seconds - static_cast<uint64_t>(min) * 60);
  std::string days;
  if (day > 1)
    days = printf_string("%d days, ", day);
  else if (day == 1)
    days = printf_string("%d day, ", day);
  return days + (short_mode ? printf_string("%2d:%02d", hour, min) : printf_string("%2d:%02d:%02d", hour, min, sec));
}

std::string uptime_header() { return printf_string("%-33s %4s %s\n", "Name", "ID", "Uptime"); }

std::string uptime_row(const std::string& name, uint32_t domid, uint64_t seconds) {
  return printf_string("%-33s %4d %s\n", name.c_str(), static_cast<int>(domid), uptime_string(seconds, false).c_str());
}

std::string uptime_short_row(const std::string& clock, const std::string& name, uint32_t domid, uint64_t seconds) {
  return printf_string(" %s up %s, %s (%d)\n", clock.c_str(), uptime_string(seconds, true).c_str(), name.c_str(),
                       static_cast<int>(domid));
}

std::string top_header() {
  return printf_string("%10s %6s %10s %6s %10s %6s %10s %9s %5s\n", "NAME", "STATE", "CPU(sec)", "CPU(%)", "MEM(k)",
                       "MEM(%)", "MAXMEM(k)", "MAXMEM(%)", "VCPUS");
}

// xentop's state letters, in its order: dying, shutdown, blocked, crashed, paused, running.
std::string top_row(const DomainRow& d, double cpu_percent, uint64_t total_kb) {
  std::string state;
  state += d.dying ? 'd' : '-';
  state += d.shutdown ? 's' : '-';
  state += d.blocked ? 'b' : '-';
  state += d.crashed ? 'c' : '-';
  state += d.paused ? 'p' : '-';
  state += d.running ? 'r' : '-';
  const double total = total_kb ? static_cast<double>(total_kb) : 1.0;
  return printf_string("%10.10s %6s %10llu %6.1f %10llu %6.1f %10llu %9.1f %5u\n", d.name.c_str(), state.c_str(),
                       static_cast<unsigned long long>(d.cpu_time_ns / 1000000000), cpu_percent,
                       static_cast<unsigned long long>(d.mem_kb), d.mem_kb / total * 100,
                       static_cast<unsigned long long>(d.max_mem_kb), d.max_mem_kb / total * 100, d.vcpus);
}

}  // namespace pvhv::xl
