#include "time/clock.h"
#include "time/pit.h"
#include "arch/x86/cpu/registers.h"
#include "console/console.h"

namespace system_clock {
namespace {
uint64_t frequency;
uint64_t tsc_at_boot;
TimeScale tsc_scale;
constexpr uint16_t calibration_ticks = 11932;  // 10 ms of PIT
}  // namespace

void calibrate() {
  uint64_t start = cpu::rdtsc();
  pit::wait_ticks(calibration_ticks);
  uint64_t elapsed = cpu::rdtsc() - start;
  frequency = elapsed * pit::frequency_hz / calibration_ticks;
  tsc_at_boot = start;
  tsc_scale = TimeScale::from_frequency(frequency);
  printk("TSC: %lu.%03lu MHz\n", frequency / 1000000, (frequency / 1000) % 1000);
}

uint64_t tsc_hz() { return frequency; }
uint64_t boot_tsc() { return tsc_at_boot; }
const TimeScale& scale() { return tsc_scale; }
uint64_t now_ns() { return tsc_scale.to_ns(cpu::rdtsc() - tsc_at_boot); }
}  // namespace system_clock
