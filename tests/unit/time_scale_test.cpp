#include "time/time_scale.h"
#include <gtest/gtest.h>

TEST(TimeScale, ConvertsCommonFrequencies) {
  for (uint64_t hz : {1000000000ULL, 2400000000ULL, 3333333333ULL, 14318180ULL, 1193182ULL, 100000000000ULL}) {
    TimeScale s = TimeScale::from_frequency(hz);
    // One second of ticks is one second of nanoseconds, within a part per million.
    uint64_t ns = s.to_ns(hz);
    EXPECT_NEAR(double(ns), 1e9, 1e3) << hz;
    EXPECT_GE(s.mul_frac, 0x80000000u) << hz;
  }
}

TEST(TimeScale, ZeroFrequencyIsInert) {
  TimeScale s = TimeScale::from_frequency(0);
  EXPECT_EQ(s.to_ns(12345), 0u);
}

TEST(TimeScale, NsToTicks) {
  EXPECT_EQ(ns_to_ticks(1000000000ULL, 2400000000ULL), 2400000000ULL);
  EXPECT_EQ(ns_to_ticks(1000, 1000000000ULL), 1000u);
  EXPECT_EQ(ns_to_ticks(1000000000000ULL, 3000000000ULL), 3000000000000ULL);  // no overflow
}
