#include "trace/analyze/work_clock.h"

#include <algorithm>

#include "trace/format/events.h"

namespace trace {

WorkClock::WorkClock(const TraceFile& file) {
  for (const ParsedRecord& r : file.records)
    if (r.event == events::kCaptureDrain && r.extra_count >= 3 && r.has_tsc && r.tsc > r.extra64(0))
      drains_.push_back({r.extra64(0), r.tsc});
  std::sort(drains_.begin(), drains_.end(), [](const Interval& a, const Interval& b) { return a.start < b.start; });
  // Merge overlaps (a corrupt or foreign file may have them), so no cycle is taken out twice.
  std::vector<Interval> merged;
  for (const Interval& d : drains_) {
    if (!merged.empty() && d.start <= merged.back().end)
      merged.back().end = std::max(merged.back().end, d.end);
    else
      merged.push_back(d);
  }
  drains_ = std::move(merged);
}

uint64_t WorkClock::cycles(uint64_t from, uint64_t to) const {
  if (to < from) return 0;
  uint64_t span = to - from;
  auto first =
      std::lower_bound(drains_.begin(), drains_.end(), from, [](const Interval& d, uint64_t t) { return d.end <= t; });
  for (auto it = first; it != drains_.end() && it->start < to; ++it)
    span -= std::min(it->end, to) - std::max(it->start, from);
  return span;
}

}  // namespace trace
