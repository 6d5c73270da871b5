// The rate limit on a domain's console output: a burst at once, then the steady rate; what
// is refused is counted and taken once for its report.
#include <gtest/gtest.h>
#include "console/output_limit.h"

namespace console {
namespace {
constexpr uint64_t kMs = 1000000;

TEST(ConsoleOutputLimit, AllowsTheBurstAtOnceThenRefuses) {
  OutputLimit limit(100, kMs);  // 100 units, then one per ms
  EXPECT_TRUE(limit.take(0, 60));
  EXPECT_TRUE(limit.take(0, 40));
  EXPECT_FALSE(limit.take(0, 1));
  EXPECT_EQ(limit.dropped(), 1u);
}

TEST(ConsoleOutputLimit, EarnsCreditAtTheSteadyRate) {
  OutputLimit limit(100, kMs);
  ASSERT_TRUE(limit.take(5 * kMs, 100));
  EXPECT_FALSE(limit.take(5 * kMs + kMs / 2, 1));  // half a unit earned
  EXPECT_TRUE(limit.take(6 * kMs, 1));
  EXPECT_FALSE(limit.take(6 * kMs, 1));
  EXPECT_TRUE(limit.take(16 * kMs, 10));
  EXPECT_FALSE(limit.take(16 * kMs, 1));
}

TEST(ConsoleOutputLimit, CreditNeverExceedsTheBurst) {
  OutputLimit limit(100, kMs);
  ASSERT_TRUE(limit.take(0, 100));
  EXPECT_FALSE(limit.take(1000000 * kMs, 101));  // a long pause earns one burst, not more
  EXPECT_TRUE(limit.take(1000000 * kMs, 100));
}

TEST(ConsoleOutputLimit, ARefusedTakeSpendsNothing) {
  OutputLimit limit(100, kMs);
  EXPECT_FALSE(limit.take(0, 101));
  EXPECT_TRUE(limit.take(0, 100));
}

TEST(ConsoleOutputLimit, HugeCountsNeitherOverflowNorPass) {
  OutputLimit limit(10, 5000 * kMs);  // Xen's printk_ratelimit: 10, then one per 5 s
  EXPECT_FALSE(limit.take(0, ~0ull));
  EXPECT_FALSE(limit.take(~0ull, ~0ull / 3));
  EXPECT_TRUE(limit.take(~0ull, 10));
}

TEST(ConsoleOutputLimit, TimeGoingBackEarnsNothing) {
  OutputLimit limit(10, kMs);
  ASSERT_TRUE(limit.take(50 * kMs, 10));
  EXPECT_FALSE(limit.take(10 * kMs, 1));
  EXPECT_FALSE(limit.take(50 * kMs, 1));  // the earlier time did not move the clock back
  EXPECT_TRUE(limit.take(51 * kMs, 1));
}

TEST(ConsoleOutputLimit, DroppedUnitsAreTakenOnce) {
  OutputLimit limit(10, kMs);
  ASSERT_TRUE(limit.take(0, 10));
  EXPECT_FALSE(limit.take(0, 7));
  limit.drop(5);  // refused elsewhere (no room on the serial line)
  EXPECT_EQ(limit.dropped(), 12u);
  EXPECT_EQ(limit.take_dropped(), 12u);
  EXPECT_EQ(limit.take_dropped(), 0u);
  EXPECT_EQ(limit.dropped(), 0u);
}

TEST(ConsoleOutputLimit, TheGuestTextNumbersHoldABurstAndTheirRate) {
  OutputLimit limit(guest_text_burst, guest_text_ns_per_byte);
  EXPECT_TRUE(limit.take(1, guest_text_burst));
  EXPECT_FALSE(limit.take(1, 1));
  // One second later: about 8 KiB more, not 9.
  EXPECT_TRUE(limit.take(1 + 1000 * kMs, 8 * 1024 - 8));
  EXPECT_FALSE(limit.take(1 + 1000 * kMs, 1024));
}
}  // namespace
}  // namespace console
