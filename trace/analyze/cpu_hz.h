// The TSC frequency used to turn cycles into seconds: given by the user (--cpu-hz), else the
// frequency our hypervisor records in the trace (TSC_FREQUENCY), else xenalyze's default of
// 2.4 GHz (Xen's own traces do not record it).
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "trace/parse/trace_file.h"

namespace trace {

constexpr uint64_t kDefaultCpuHz = 2400000000ull;
// The frequencies accepted, from the command line and from a trace's TSC_FREQUENCY record:
// 1 kHz to 1 THz. Anything else (0, NaN, 1e13G...) is refused, so no conversion from double
// overflows and every cycles-to-seconds division has a sane divisor.
constexpr uint64_t kMinCpuHz = 1000ull;
constexpr uint64_t kMaxCpuHz = 1000000000000ull;

struct CpuHz {
  uint64_t hz = kDefaultCpuHz;
  enum class Source { option, trace, fallback } source = Source::fallback;
  std::optional<uint64_t> refused_trace_hz;  // a TSC_FREQUENCY outside the bounds, ignored

  double seconds(uint64_t cycles) const { return double(cycles) / double(hz); }
  std::string describe() const;  // "2.40 GHz", as xenalyze prints it
  const char* source_name() const;
};

// xenalyze's syntax: a decimal number with an optional G, M or K suffix ("2.4G",
// "3000000000"). nullopt for anything else and for values outside kMinCpuHz..kMaxCpuHz.
std::optional<uint64_t> parse_cpu_hz(const std::string& text);

CpuHz choose_cpu_hz(const TraceFile& file, std::optional<uint64_t> option);

}  // namespace trace
