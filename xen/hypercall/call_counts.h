// How many times each hypercall was made (numbers below kCountedCalls, multicall entries
// included), for the run's summary (xen/summary.cpp), and the hypercalls perf counter.
#pragma once
#include <stdint.h>
#include "perf/perf_counters.h"

namespace hypercall {
inline constexpr unsigned kCountedCalls = 64;

namespace detail {
extern uint64_t call_counts[kCountedCalls];
}
// Inline: every hypercall passes here.
inline void count_call(uint64_t number) {
  perf::add(perf::Counter::hypercalls);
  if (number < kCountedCalls) ++detail::call_counts[number];
}
inline uint64_t call_count(unsigned number) { return detail::call_counts[number]; }
}  // namespace hypercall
