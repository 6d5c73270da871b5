// The per-CPU TLB-flush filter (mm/tlb_flush_filter.h) and the CPU mask it works on.
#include <gtest/gtest.h>

#include "arch/x86/cpu/cpu_mask.h"
#include "arch/x86/cpu/flush_clock.h"
#include "mm/tlb_flush_clock.h"
#include "mm/tlb_flush_filter.h"

namespace {
using mm::cpus_needing_flush;

TEST(CpuMask, SetOperationsAndIteration) {
  CpuMask mask = CpuMask::only(1) | CpuMask::only(3) | CpuMask::only(63);
  EXPECT_EQ(mask.count(), 3u);
  EXPECT_TRUE(mask.contains(3));
  EXPECT_FALSE(mask.contains(2));
  EXPECT_FALSE(mask.contains(64));
  EXPECT_EQ(mask.without(3), CpuMask::only(1) | CpuMask::only(63));
  EXPECT_EQ(CpuMask::only(64), CpuMask());
  EXPECT_EQ(CpuMask::first(4).bits(), 0xfu);
  EXPECT_EQ(CpuMask::first(64).count(), 64u);
  unsigned seen[4] = {}, n = 0;
  for_each_cpu(mask, [&](unsigned cpu) { seen[n++] = cpu; });
  ASSERT_EQ(n, 3u);
  EXPECT_EQ(seen[0], 1u);
  EXPECT_EQ(seen[1], 3u);
  EXPECT_EQ(seen[2], 63u);
  EXPECT_EQ(CpuMask().next(0), CpuMask::capacity);
  mask.remove(1);
  mask.add(0);
  EXPECT_EQ(mask.next(0), 0u);
  EXPECT_EQ(mask.next(1), 3u);
  EXPECT_EQ(mask.next(4), 63u);
  EXPECT_EQ(mask.next(64), CpuMask::capacity);
}

TEST(CpuMask, NumbersBeyondTheCapacityAreNeverInIt) {
  CpuMask mask;
  mask.add(64);
  mask.add(1000);
  EXPECT_TRUE(mask.empty());
  mask.add(2);
  mask.remove(200);
  EXPECT_EQ(mask, CpuMask::only(2));
  EXPECT_EQ(CpuMask::first(0), CpuMask());
  EXPECT_EQ(CpuMask::first(100).count(), 64u);
}

TEST(MmTlbFlushFilter, OnlyDirtyCpusWhoseLastFlushIsNotAfterTheStamp) {
  // CPU0 flushed at 5, CPU1 at 9, CPU2 at 7, CPU3 never; the clock reads 9.
  const uint64_t last_flush[4] = {5, 9, 7, flush_clock::never};
  CpuMask all = CpuMask::first(4);
  // A frame stamped 7: CPU1 flushed after it; CPU2 ticked the clock to 7 and then flushed,
  // and the stamp 7 may have been read between the two, so it may still hold the frame.
  EXPECT_EQ(cpus_needing_flush(last_flush, 4, all, 7, 9), CpuMask::only(0) | CpuMask::only(2) | CpuMask::only(3));
  EXPECT_EQ(cpus_needing_flush(last_flush, 4, all, 4, 9), CpuMask::only(3));
  EXPECT_EQ(cpus_needing_flush(last_flush, 4, all, 9, 9), all);
  // Clean CPUs never ran the domain: they cannot hold its translations.
  EXPECT_EQ(cpus_needing_flush(last_flush, 4, CpuMask::only(1) | CpuMask::only(2), 8, 9), CpuMask::only(2));
  EXPECT_EQ(cpus_needing_flush(last_flush, 4, CpuMask(), 8, 9), CpuMask());
  // Beyond the CPUs that exist: ignored.
  EXPECT_EQ(cpus_needing_flush(last_flush, 2, all, 9, 9), CpuMask::first(2));
  EXPECT_EQ(cpus_needing_flush(last_flush, 4, CpuMask::only(5) | CpuMask::only(63), 9, 9), CpuMask());
}

TEST(MmTlbFlushFilter, AnUnusedFrameNeedsNoFlush) {
  const uint64_t last_flush[2] = {flush_clock::never, 3};
  EXPECT_EQ(cpus_needing_flush(last_flush, 2, CpuMask::first(2), flush_clock::never, 3), CpuMask());
}

TEST(MmTlbFlushFilter, AFlushRacingTheCallerCountsAsNotDone) {
  // CPU1 ticked the clock to 11 after the caller read it at 10: its flush may not have run.
  const uint64_t last_flush[2] = {10, 11};
  EXPECT_EQ(cpus_needing_flush(last_flush, 2, CpuMask::first(2), 9, 10), CpuMask::only(1));
}

TEST(MmTlbFlushFilter, TheClockSkipsNeverWhenItWraps) {
  EXPECT_EQ(flush_clock::next(1), 2u);
  EXPECT_EQ(flush_clock::next(UINT64_MAX - 1), UINT64_MAX);
  EXPECT_EQ(flush_clock::next(UINT64_MAX), 1u);
}

TEST(MmTlbFlushFilter, WraparoundKeepsTheOrder) {
  // The clock ran ..., 2^64-2, 2^64-1, 1, 2, 3 (0 skipped) and reads 3.
  const uint64_t before_wrap = UINT64_MAX - 1, just_before = UINT64_MAX;
  // CPU0 flushed before the wrap, CPU1 at its last value, CPU2 after it, CPU3 at the clock.
  const uint64_t last_flush[4] = {before_wrap, just_before, 2, 3};
  CpuMask all = CpuMask::first(4);
  EXPECT_EQ(cpus_needing_flush(last_flush, 4, all, just_before, 3), CpuMask::only(0) | CpuMask::only(1));
  EXPECT_EQ(cpus_needing_flush(last_flush, 4, all, 1, 3), CpuMask::first(2));
  EXPECT_EQ(cpus_needing_flush(last_flush, 4, all, 2, 3), CpuMask::first(3));
  EXPECT_EQ(cpus_needing_flush(last_flush, 4, all, before_wrap - 5, 3), CpuMask());
  EXPECT_EQ(cpus_needing_flush(last_flush, 4, all, 3, 3), all);
}

// The same history of ticks, stamps and flushes gives the same answers wherever on the counter
// it happens, across the wrap included.
TEST(MmTlbFlushFilter, TheAnswersDoNotDependOnWhereTheCounterStands) {
  constexpr unsigned cpus = 4, steps = 40;
  auto run = [&](uint64_t start, uint32_t seed, uint64_t* answers) {
    uint64_t now = start, last_flush[cpus] = {};
    uint64_t stamps[steps];
    uint32_t state = seed;
    for (unsigned step = 0; step < steps; ++step) {
      state = state * 1103515245u + 12345u;
      unsigned cpu = (state >> 16) % cpus;
      if ((state >> 8) & 1) {  // this CPU flushes
        now = flush_clock::next(now);
        last_flush[cpu] = now;
      }
      stamps[step] = now;  // a frame stamped at this step
      uint64_t need = 0;
      for (unsigned old = 0; old <= step; ++old)
        need = need * 17 + cpus_needing_flush(last_flush, cpus, CpuMask::first(cpus), stamps[old], now).bits();
      answers[step] = need;
    }
  };
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    uint64_t low[steps], wrapping[steps], high[steps];
    run(1, seed, low);
    run(UINT64_MAX - 7, seed, wrapping);  // wraps within the first steps
    run(uint64_t(1) << 63, seed, high);
    for (unsigned step = 0; step < steps; ++step) {
      EXPECT_EQ(low[step], wrapping[step]) << "seed " << seed << " step " << step;
      EXPECT_EQ(low[step], high[step]) << "seed " << seed << " step " << step;
    }
  }
}

// On one CPU the filter says what TlbFlushClock::may_hold says.
TEST(MmTlbFlushFilter, AgreesWithTheSingleClockOnOneCpu) {
  mm::TlbFlushClock clock;
  uint64_t last_flush[1] = {1};  // the clock's own start: a flush at 1
  for (int step = 0; step < 6; ++step) {
    uint64_t stamp = clock.now();
    for (uint64_t probe : {uint64_t(1), stamp}) {
      bool single = clock.may_hold(probe);
      bool filtered = cpus_needing_flush(last_flush, 1, CpuMask::only(0), probe, clock.now()).contains(0);
      EXPECT_EQ(single, filtered) << "probe " << probe << " step " << step;
    }
    if (step % 2) {
      clock.full_flush();
      last_flush[0] = clock.now();
    }
  }
}
}  // namespace
