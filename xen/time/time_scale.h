// Conversion of TSC ticks to nanoseconds in the form Xen publishes to guests in
// vcpu_time_info: ns = ((ticks << shift) * mul) >> 32 (a negative shift shifts right).
#pragma once
#include <stdint.h>

struct TimeScale {
  uint32_t mul_frac = 0;
  int8_t shift = 0;

  static TimeScale from_frequency(uint64_t ticks_per_second);
  constexpr uint64_t to_ns(uint64_t ticks) const {
    uint64_t shifted = shift >= 0 ? ticks << shift : ticks >> -shift;
    return uint64_t((unsigned __int128)shifted * mul_frac >> 32);
  }
};

// The inverse, for programming timers: ns to ticks at the given frequency, without overflow.
constexpr uint64_t ns_to_ticks(uint64_t ns, uint64_t ticks_per_second) {
  return uint64_t((unsigned __int128)ns * ticks_per_second / 1000000000ULL);
}
