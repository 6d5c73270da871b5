#include "time/time_scale.h"

// Finds shift and a 32-bit fraction so that mul/2^32 * 2^shift == 1e9 / frequency, with the
// fraction normalised into [2^31, 2^32) for the most precision (the guest computes with it).
TimeScale TimeScale::from_frequency(uint64_t ticks_per_second) {
  TimeScale scale;
  if (ticks_per_second == 0) return scale;
  uint64_t ns = 1000000000ULL;
  uint64_t ticks = ticks_per_second;
  int shift = 0;
  while (ticks > ns * 2) {  // ratio < 1/2: pre-shift ticks right
    ticks >>= 1;
    --shift;
  }
  while (ticks <= ns) {  // ratio >= 1: pre-shift ticks left
    ticks <<= 1;
    ++shift;
  }
  scale.mul_frac = uint32_t(((unsigned __int128)ns << 32) / ticks);
  scale.shift = int8_t(shift);
  return scale;
}
