// xl.cfg's `cpus` / `cpus_soft` and `xl vcpu-pin`'s CPU lists, as Xen 4.17's xl parses them
// (parse_cpurange): comma-separated items, each "all", a CPU "N" or a range "N-M" (M >= N), any
// of them but "all" after "^" to take the CPUs out again, or after "node:" / "nodes:" for whole
// NUMA nodes (one node here, 0, with every CPU). Items apply left to right from an empty set, so
// "all,^1" is every CPU but 1 and "^1" alone is none. CPUs at or beyond `nr_cpus` are ignored
// (libxl's bitmap holds the host's CPUs only). Pure: unit-tested (tests/unit/xl_cpu_range_test.cpp).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pvhv::xl::cfg {

// The CPUs, lowest first, or nothing with xl's message in `error` ("Invalid pcpu range: X.",
// "Can't combine \"^\" and \"all\".").
std::optional<std::vector<uint32_t>> parse_cpu_range(std::string_view text, uint32_t nr_cpus, std::string& error);

// An upper bound for checking a config before the host's CPU count is known.
inline constexpr uint32_t kMaxCpusForSyntax = 4096;

}  // namespace pvhv::xl::cfg
