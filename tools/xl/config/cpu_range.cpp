#include "tools/xl/config/cpu_range.h"

#include <cerrno>
#include <climits>
#include <cstdlib>

namespace pvhv::xl::cfg {
namespace {

bool skip_prefix(std::string_view& text, std::string_view prefix) {
  if (text.substr(0, prefix.size()) != prefix) return false;
  text.remove_prefix(prefix.size());
  return true;
}

// xl's parse_range: "N" or "N-M" with strtoul's reading (leading blanks and a sign accepted),
// nothing after it, M >= N.
bool parse_range(const std::string& item, unsigned long& a, unsigned long& b) {
  const char* str = item.c_str();
  char* end = nullptr;
  a = b = std::strtoul(str, &end, 10);
  if (end == str || a == ULONG_MAX) return false;
  if (*end == '-') {
    const char* next = end + 1;
    b = std::strtoul(next, &end, 10);
    if (end == next || b == ULONG_MAX || b < a) return false;
  }
  return *end == '\0';
}

}  // namespace

std::optional<std::vector<uint32_t>> parse_cpu_range(std::string_view text, uint32_t nr_cpus, std::string& error) {
  std::vector<bool> set(nr_cpus, false);
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string_view item =
        text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    start = comma == std::string_view::npos ? text.size() + 1 : comma + 1;
    if (item.empty()) continue;  // strtok: empty items are skipped
    const bool is_not = skip_prefix(item, "^");
    const bool nodes = skip_prefix(item, "node:") || skip_prefix(item, "nodes:");
    if (item == "all") {
      if (is_not) {
        error = "Can't combine \"^\" and \"all\".";
        return std::nullopt;
      }
      set.assign(nr_cpus, true);
      continue;
    }
    unsigned long a = 0, b = 0;
    if (!parse_range(std::string(item), a, b)) {
      error = "Invalid pcpu range: " + std::string(item) + ".";
      return std::nullopt;
    }
    if (nodes) {  // node 0 holds every CPU; other nodes do not exist and name none
      if (a == 0) set.assign(nr_cpus, !is_not);
      continue;
    }
    for (unsigned long cpu = a; cpu <= b && cpu < nr_cpus; ++cpu) set[cpu] = !is_not;
  }
  std::vector<uint32_t> cpus;
  for (uint32_t cpu = 0; cpu < nr_cpus; ++cpu)
    if (set[cpu]) cpus.push_back(cpu);
  return cpus;
}

}  // namespace pvhv::xl::cfg
