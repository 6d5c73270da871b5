#pragma once
// Time from the shared info page: vCPU system time (ns since boot) extrapolated with the TSC
// under the version protocol, and the wallclock (Unix time at system time 0).
#include <stdint.h>

namespace kernel {

uint64_t system_time_ns();
// Unix time now, in nanoseconds.
uint64_t wallclock_ns();

}  // namespace kernel
