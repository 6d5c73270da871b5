#include "trace/analyze/cycle_summary.h"

#include <algorithm>

namespace trace {
namespace {
unsigned clamp_percent(int percent) { return unsigned(std::clamp(percent, 0, 100)); }
}  // namespace

uint64_t CycleSummary::percentile(int percent) const {
  if (samples_.empty()) return 0;
  std::vector<uint64_t> sorted = samples_;
  // size * 100 cannot overflow: there are at most as many samples as records.
  size_t k = std::min(sorted.size() * clamp_percent(percent) / 100, sorted.size() - 1);
  std::nth_element(sorted.begin(), sorted.begin() + long(k), sorted.end());
  return sorted[k];
}

uint64_t CycleSummary::weighted_percentile(int percent) const {
  if (samples_.empty()) return 0;
  std::vector<uint64_t> sorted = samples_;
  std::sort(sorted.begin(), sorted.end());
  // 128-bit weights (xenalyze's signed 64-bit total overflows on one corrupt interval); the
  // target is split so that even a total near 2^128 times the percentage cannot overflow.
  unsigned p = clamp_percent(percent);
  unsigned __int128 target = cycles_ / 100 * p + cycles_ % 100 * p / 100;
  // The first sample whose cumulative weight passes the target.
  unsigned __int128 below = 0;
  for (uint64_t s : sorted) {
    if (below + s > target) return s;
    below += s;
  }
  return sorted.back();
}

}  // namespace trace
