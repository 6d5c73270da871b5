// The flush clock's values (docs/architecture.md, "Locks, IPIs and the flush clock"): one
// 64-bit counter for the machine that every full TLB flush of a CPU ticks before it flushes
// (arch/x86/platform/cross_cpu keeps it and each CPU's last tick); mm/tlb_flush_filter.h
// compares them. Pure. 0 is "never" (a frame never used, a CPU that never flushed on this
// clock): the counter skips it when it wraps.
#pragma once
#include <stdint.h>

namespace flush_clock {
constexpr uint64_t never = 0;
constexpr uint64_t first = 1;  // the clock's value at boot

// The value a flush ticks the clock to from `now`.
constexpr uint64_t next(uint64_t now) { return now + 1 == never ? first : now + 1; }
}  // namespace flush_clock
