#pragma once
// Time from the shared info page: vCPU system time (ns since boot) extrapolated with the TSC
// under the version protocol, and the wallclock (Unix time at system time 0).
#include <stdint.h>

namespace kernel {

// The TSC, which the hypervisor also stamps its trace records with.
inline uint64_t read_tsc() {
  uint32_t low, high;
  asm volatile("rdtsc" : "=a"(low), "=d"(high));
  return uint64_t{high} << 32 | low;
}

uint64_t system_time_ns();
// Unix time now, in nanoseconds.
uint64_t wallclock_ns();

}  // namespace kernel
