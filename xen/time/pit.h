// The 8254 PIT, used once at boot as a known clock to calibrate the TSC and the APIC timer.
#pragma once
#include <stdint.h>

namespace pit {
constexpr uint64_t frequency_hz = 1193182;
// Busy-waits `ticks` PIT ticks (at most 65535) on channel 2, calling `sample` before and after.
void wait_ticks(uint16_t ticks);
}  // namespace pit
