// Cycles of the workload between two TSC values: the span minus the time dom0 spent copying
// records out in between (CAPTURE_DRAIN records). One CPU runs the workload and the capture,
// so without this every paired cost that straddles a drain (an unhook whose rehook came after
// one, a fork) would include the capture's own work.
#pragma once
#include <cstdint>
#include <vector>

#include "trace/parse/trace_file.h"

namespace trace {

class WorkClock {
 public:
  explicit WorkClock(const TraceFile& file);
  // to - from, less every drain's overlap with [from, to]; 0 if to < from.
  uint64_t cycles(uint64_t from, uint64_t to) const;
  size_t drains() const { return drains_.size(); }

 private:
  struct Interval {
    uint64_t start, end;
  };
  std::vector<Interval> drains_;  // sorted by start, not overlapping
};

}  // namespace trace
