// Each physical CPU's idle time, as XEN_SYSCTL_getcpuinfo reports it (Xen's get_cpu_idle_time:
// the time its idle vCPU spent running). Two hooks mark an idle stretch: idle_time::enter when a
// CPU starts idling (the scheduler's idle loop; a parked AP once it is up) and idle_time::leave
// when it picks work again. Only the CPU itself calls them; any CPU may read total_ns, which
// includes the stretch under way. A sequence count makes the read consistent without a lock.
// Pure (the caller passes the time): unit-tested (tests/unit/time_idle_time_test.cpp).
#pragma once
#include <stdint.h>

namespace idle_time {
class IdleClock {
 public:
  void enter(uint64_t now_ns);
  void leave(uint64_t now_ns);
  uint64_t total_ns(uint64_t now_ns) const;  // 0 for a CPU that never idled
  bool idle() const { return __atomic_load_n(&idle_, __ATOMIC_ACQUIRE); }

 private:
  uint64_t sequence_ = 0;  // odd while the owner updates
  uint64_t finished_ns_ = 0;
  uint64_t since_ns_ = 0;
  bool idle_ = false;
};

// The machine's CPUs (at most 64, CpuMask's capacity).
constexpr unsigned max_cpus = 64;
void enter(unsigned cpu, uint64_t now_ns);
void leave(unsigned cpu, uint64_t now_ns);
uint64_t total_ns(unsigned cpu, uint64_t now_ns);
}  // namespace idle_time
