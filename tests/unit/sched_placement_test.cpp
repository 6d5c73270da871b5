#include "sched/placement.h"

#include <gtest/gtest.h>

namespace {
using placement::allowed_cpus;
using placement::choose_cpu;
using placement::CpuLoad;
using placement::must_move;
using placement::none;
using placement::pull_source;

const CpuMask four = CpuMask::first(4);

TEST(Placement, AllowedIsAffinityAmongOnline) {
  EXPECT_EQ(allowed_cpus(CpuMask::only(2), four), CpuMask::only(2));
  EXPECT_EQ(allowed_cpus(CpuMask::only(2) | CpuMask::only(9), four), CpuMask::only(2));
  // No online CPU in it: every online CPU (as Xen breaks the affinity).
  EXPECT_EQ(allowed_cpus(CpuMask::only(9), four), four);
  EXPECT_EQ(allowed_cpus(CpuMask{}, four), four);
}

TEST(Placement, WakeStaysOnItsIdleLastCpu) {
  CpuLoad loads[4] = {{0, true}, {0, false}, {0, false}, {0, false}};
  EXPECT_EQ(choose_cpu(2, four, loads, 4), 2u);
}

TEST(Placement, WakeLeavesABusyLastCpuForTheLeastLoaded) {
  CpuLoad loads[4] = {{1, true}, {0, true}, {2, true}, {0, false}};
  EXPECT_EQ(choose_cpu(2, four, loads, 4), 3u);
  loads[3].busy = true;  // now 1 and 3 tie at 1: the lower
  EXPECT_EQ(choose_cpu(2, four, loads, 4), 1u);
}

TEST(Placement, LastCpuWinsATie) {
  CpuLoad loads[4] = {{0, true}, {0, true}, {0, true}, {0, true}};
  EXPECT_EQ(choose_cpu(2, four, loads, 4), 2u);
  EXPECT_EQ(choose_cpu(0, four, loads, 4), 0u);
}

TEST(Placement, HardAffinityIsAbsolute) {
  CpuLoad loads[4] = {{0, false}, {0, false}, {5, true}, {0, false}};
  // Only CPU 2 allowed: it goes there however loaded, even from an idle last CPU.
  EXPECT_EQ(choose_cpu(0, CpuMask::only(2), loads, 4), 2u);
  // {1, 2}: the idle one of the two.
  EXPECT_EQ(choose_cpu(2, CpuMask::only(1) | CpuMask::only(2), loads, 4), 1u);
}

TEST(Placement, NothingAllowedKeepsLast) {
  CpuLoad loads[2] = {};
  EXPECT_EQ(choose_cpu(1, CpuMask{}, loads, 2), 1u);
  EXPECT_EQ(choose_cpu(1, CpuMask::only(5), loads, 2), 1u);  // beyond the CPUs given
}

TEST(Placement, OneCpuAlwaysChoosesIt) {
  CpuLoad loads[1] = {{3, true}};
  EXPECT_EQ(choose_cpu(0, CpuMask::only(0), loads, 1), 0u);
}

TEST(Placement, IdleCpuPullsFromTheMostWaiting) {
  CpuLoad loads[4] = {{1, true}, {0, false}, {3, true}, {2, true}};
  EXPECT_EQ(pull_source(1, loads, 4, CpuMask{}), 2);
  EXPECT_EQ(pull_source(1, loads, 4, CpuMask::only(2)), 3);
  EXPECT_EQ(pull_source(1, loads, 4, CpuMask::only(2) | CpuMask::only(3)), 0);
  EXPECT_EQ(pull_source(1, loads, 4, four), none);
}

TEST(Placement, NothingWaitingNothingPulled) {
  CpuLoad loads[4] = {{0, true}, {0, false}, {0, true}, {0, true}};
  EXPECT_EQ(pull_source(1, loads, 4, CpuMask{}), none);
}

TEST(Placement, NeverPullsFromAnIdleCpu) {
  // CPU 2 is idle with a vCPU placed on it: it was told and runs it itself.
  CpuLoad loads[4] = {{0, false}, {0, true}, {1, false}, {0, true}};
  EXPECT_EQ(pull_source(0, loads, 4, CpuMask{}), none);
}

TEST(Placement, NeverPullsFromItself) {
  CpuLoad loads[2] = {{0, false}, {2, true}};
  EXPECT_EQ(pull_source(1, loads, 2, CpuMask{}), none);
  EXPECT_EQ(pull_source(0, loads, 2, CpuMask{}), 1);
}

TEST(Placement, PullTieGoesToTheLowest) {
  CpuLoad loads[4] = {{0, false}, {2, true}, {0, true}, {2, true}};
  EXPECT_EQ(pull_source(0, loads, 4, CpuMask{}), 1);
}

TEST(Placement, MoveWhenAffinityDropsTheCpu) {
  EXPECT_FALSE(must_move(2, four, four));
  EXPECT_TRUE(must_move(1, CpuMask::only(2), four));
  EXPECT_FALSE(must_move(2, CpuMask::only(2), four));
  EXPECT_FALSE(must_move(1, CpuMask::only(7), four));  // no online CPU in it: anywhere
}
}  // namespace
