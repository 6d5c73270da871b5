// System time: nanoseconds since boot from the TSC, the frequency calibrated at boot.
#pragma once
#include <stdint.h>
#include "time/time_scale.h"

namespace system_clock {
void calibrate();
uint64_t tsc_hz();
uint64_t boot_tsc();
const TimeScale& scale();
uint64_t now_ns();
}  // namespace system_clock
