// Count, total and distribution of a duration in TSC cycles, as xenalyze keeps them
// (including its sampling: the first 1024 samples, doubled as they fill, unbounded by
// default), so percentiles can be printed the same way.
//
// Durations come from a trace and may be anything up to 2^64 - 1 (a corrupt TSC). Samples are
// unsigned (xenalyze keeps them in a signed long long, so a 2^63 jump turns negative there) and
// every total is 128 bits wide: it would take 2^64 samples (one per record, each held in
// memory) of 2^64 - 1 cycles to overflow it, so sums, averages and the weighted percentile's
// running weight never overflow.
#pragma once
#include <cstdint>
#include <vector>

#include "trace/analyze/checked.h"

namespace trace {

class CycleSummary {
 public:
  // A zero-length interval counts as an event but adds no sample (as in xenalyze).
  void add(uint64_t cycles) {
    events_++;
    if (cycles == 0) return;
    samples_.push_back(cycles);
    count_++;
    cycles_ += cycles;
  }
  // The interval between two TSCs. One that runs backwards (TSC skew, a corrupt trace) is
  // no duration at all: it is counted in backwards() and adds no event.
  void add_interval(uint64_t from, uint64_t to) {
    if (to < from)
      backwards_++;
    else
      add(to - from);
  }

  uint64_t count() const { return count_; }
  uint64_t events() const { return events_; }
  uint64_t backwards() const { return backwards_; }
  uint64_t cycles() const { return saturate(cycles_); }                         // saturated at 2^64 - 1 (for printing)
  uint64_t average() const { return count_ ? uint64_t(cycles_ / count_) : 0; }  // <= the largest sample

  // The sample at rank count*percent/100 (xenalyze's "percentile"). percent in 0..100.
  uint64_t percentile(int percent) const;
  // The sample below which `percent` of the total *time* lies (xenalyze's
  // "self_weighted_percentile"): long intervals weigh more than short ones.
  uint64_t weighted_percentile(int percent) const;

 private:
  uint64_t events_ = 0;
  uint64_t count_ = 0;
  uint64_t backwards_ = 0;
  unsigned __int128 cycles_ = 0;
  std::vector<uint64_t> samples_;
};

}  // namespace trace
