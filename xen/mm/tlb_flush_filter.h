// The flush clock across CPUs (docs/architecture.md, "Locks, IPIs and the flush clock"): which
// CPUs must flush their TLB before a frame may take a new use, the per-CPU form of
// TlbFlushClock's rule. Pure, unit-tested (tests/unit/mm_tlb_flush_filter_test.cpp). The clock
// (arch/x86/cpu/flush_clock.h) and each CPU's stamp live in arch/x86/platform/cross_cpu;
// nothing on the MMU paths asks this filter yet (they run on CPU 0 alone and keep
// TlbFlushClock).
//
// A CPU's full flush ticks the clock first and then flushes, and the CPU's stamp is the value
// of that tick: so a CPU stamp later than a frame's stamp names a flush that began after the
// frame's stamp was read, which is after the frame's last use ended (no translation of it can
// have survived). A CPU stamp equal to the frame's is not enough: the frame may have been
// stamped between that tick and the flush.
//
// Wraparound: values are compared by their distance behind the clock's current value, modulo
// 2^64, so a counter that wraps keeps its order as long as nothing compared is 2^63 ticks
// old; at one tick per flush that is never, but the rule does not depend on where the counter
// stands (the unit tests run one history across the wrap). The clock skips `never` (0).
#pragma once
#include <stdint.h>
#include "arch/x86/cpu/cpu_mask.h"
#include "arch/x86/cpu/flush_clock.h"

namespace mm {

// Whether a CPU whose last full flush ticked the clock to `cpu_flush` has flushed since a frame
// was stamped `stamp`. `now`: the clock read after the stamp was taken (a cpu_flush later than
// `now`, a flush racing with the caller, counts as not flushed: the safe answer).
constexpr bool flushed_since(uint64_t now, uint64_t cpu_flush, uint64_t stamp) {
  if (stamp == flush_clock::never) return true;  // the frame was never used: nothing to flush
  if (cpu_flush == flush_clock::never) return false;
  return now - cpu_flush < now - stamp;  // distances behind now, modulo 2^64
}

// last_flush[cpu] for cpu < cpus: each CPU's stamp (flush_clock::never: none yet). dirty: the
// CPUs that may have run the frame's domain (its dirty-CPU mask); CPUs at or beyond `cpus`
// are ignored. The CPUs that must flush: dirty and not flushed since `stamp`.
constexpr CpuMask cpus_needing_flush(const uint64_t* last_flush, unsigned cpus, CpuMask dirty, uint64_t stamp,
                                     uint64_t now) {
  CpuMask need;
  for_each_cpu(dirty & CpuMask::first(cpus), [&](unsigned cpu) {
    if (!flushed_since(now, last_flush[cpu], stamp)) need.add(cpu);
  });
  return need;
}

}  // namespace mm
