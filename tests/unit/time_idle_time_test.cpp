#include "time/idle_time.h"

#include <gtest/gtest.h>

namespace {
TEST(IdleTime, CountsIdleStretches) {
  idle_time::IdleClock clock;
  EXPECT_EQ(clock.total_ns(100), 0u) << "never idled";
  clock.enter(100);
  EXPECT_TRUE(clock.idle());
  EXPECT_EQ(clock.total_ns(150), 50u) << "the stretch under way counts";
  clock.leave(180);
  EXPECT_FALSE(clock.idle());
  EXPECT_EQ(clock.total_ns(500), 80u);
  clock.enter(600);
  clock.enter(650);  // a second enter while idle changes nothing
  clock.leave(700);
  clock.leave(900);  // nor a second leave
  EXPECT_EQ(clock.total_ns(1000), 180u);
}

TEST(IdleTime, PerCpu) {
  idle_time::enter(3, 1000);
  EXPECT_EQ(idle_time::total_ns(3, 1500), 500u);
  EXPECT_EQ(idle_time::total_ns(4, 1500), 0u);
  idle_time::leave(3, 2000);
  EXPECT_EQ(idle_time::total_ns(3, 9000), 1000u);
  idle_time::enter(idle_time::max_cpus, 0);  // out of range: ignored
  EXPECT_EQ(idle_time::total_ns(idle_time::max_cpus, 10), 0u);
}
}  // namespace
