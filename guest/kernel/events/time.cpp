#include "kernel/events/time.h"

#include "pv-kernel-patches/shared_info.h"

namespace kernel {
namespace {

inline void compiler_barrier() { asm volatile("" ::: "memory"); }

uint64_t scale_delta(uint64_t delta, uint32_t multiplier, int8_t shift) {
  if (shift < 0)
    delta >>= -shift;
  else
    delta <<= shift;
  return static_cast<uint64_t>((static_cast<unsigned __int128>(delta) * multiplier) >> 32);
}

}  // namespace

uint64_t system_time_ns() {
  const volatile vcpu_time_info_t& info = vcpu()->time;
  for (;;) {
    // An odd version means the hypervisor is updating the record; a changed version means
    // we read a torn record. Either way, read again.
    uint32_t version = info.version;
    compiler_barrier();
    if (version & 1) continue;
    uint64_t tsc = read_tsc();
    uint64_t result = info.system_time + scale_delta(tsc - info.tsc_timestamp, info.tsc_to_system_mul, info.tsc_shift);
    compiler_barrier();
    if (info.version == version) return result;
  }
}

uint64_t wallclock_ns() {
  const volatile shared_info_t& shared = *shared_info();
  for (;;) {
    uint32_t version = shared.wc_version;
    compiler_barrier();
    if (version & 1) continue;
    uint64_t seconds = shared.wc_sec | static_cast<uint64_t>(shared.wc_sec_hi) << 32;
    uint64_t nanoseconds = shared.wc_nsec;
    compiler_barrier();
    if (shared.wc_version == version) {
      return seconds * 1000000000ull + nanoseconds + system_time_ns();
    }
  }
}

}  // namespace kernel
