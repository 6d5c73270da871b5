#include "trace/analyze/cpu_hz.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "trace/format/events.h"

namespace trace {

std::string CpuHz::describe() const {
  double value = double(hz);
  char suffix = ' ';
  if (hz > 1000000000ull) {
    value /= 1e9;
    suffix = 'G';
  } else if (hz > 1000000ull) {
    value /= 1e6;
    suffix = 'M';
  } else if (hz > 1000ull) {
    value /= 1e3;
    suffix = 'k';
  }
  char text[32];
  std::snprintf(text, sizeof text, "%1.2f %cHz", value, suffix);
  return text;
}

const char* CpuHz::source_name() const {
  switch (source) {
    case Source::option: return "option";
    case Source::trace: return "trace";
    case Source::fallback: return "default";
  }
  return "?";
}

std::optional<uint64_t> parse_cpu_hz(const std::string& text) {
  // Digits, a point and an exponent only: strtod alone would also take "nan", "inf", hex
  // floats, leading blanks and signs.
  size_t number_end = text.find_first_not_of("0123456789.eE+-");
  std::string number = text.substr(0, number_end);
  std::string suffix = number_end == std::string::npos ? "" : text.substr(number_end);
  if (number.empty() || !(std::isdigit((unsigned char)number[0]) || number[0] == '.')) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  double base = std::strtod(number.c_str(), &end);
  if (*end || errno == ERANGE) return std::nullopt;
  double scale = 1;
  if (suffix == "G")
    scale = 1e9;
  else if (suffix == "M")
    scale = 1e6;
  else if (suffix == "K" || suffix == "k")
    scale = 1e3;
  else if (!suffix.empty())
    return std::nullopt;
  double hz = base * scale;
  // Checked in double before the conversion: a NaN fails both comparisons.
  if (!(hz >= double(kMinCpuHz) && hz <= double(kMaxCpuHz))) return std::nullopt;
  return uint64_t(hz);
}

CpuHz choose_cpu_hz(const TraceFile& file, std::optional<uint64_t> option) {
  CpuHz chosen;
  if (option) {
    chosen.hz = std::clamp(*option, kMinCpuHz, kMaxCpuHz);  // parse_cpu_hz's bounds, for any caller
    chosen.source = CpuHz::Source::option;
    return chosen;
  }
  for (const ParsedRecord& r : file.records) {
    if (r.event != events::kTscFrequency || r.extra_count != 2) continue;
    uint64_t hz = r.extra64(0);
    if (hz >= kMinCpuHz && hz <= kMaxCpuHz) {
      chosen.hz = hz;
      chosen.source = CpuHz::Source::trace;
      return chosen;
    }
    if (!chosen.refused_trace_hz) chosen.refused_trace_hz = hz;
  }
  return chosen;  // the default
}

}  // namespace trace
