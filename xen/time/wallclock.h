// The wall-clock time at boot, from the CMOS real-time clock, for shared_info's wallclock.
#pragma once
#include <stdint.h>

namespace wallclock {
uint64_t seconds_since_epoch();
}
