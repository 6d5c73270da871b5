#include "sched/run_queue.h"

#include <gtest/gtest.h>

namespace {
using run_queue::next_round_robin;
using run_queue::none;
using run_queue::others_runnable;

TEST(RunQueue, NothingRunnableIsNone) {
  const bool runnable[4] = {false, false, false, false};
  EXPECT_EQ(next_round_robin(runnable, 4, 0), none);
  EXPECT_EQ(next_round_robin(runnable, 4, none), none);
}

TEST(RunQueue, NextAfterCurrentWrapsAround) {
  const bool runnable[4] = {true, false, true, false};
  EXPECT_EQ(next_round_robin(runnable, 4, 0), 2);
  EXPECT_EQ(next_round_robin(runnable, 4, 2), 0);
  EXPECT_EQ(next_round_robin(runnable, 4, 3), 0);
}

TEST(RunQueue, CurrentContinuesOnlyWhenAlone) {
  const bool runnable[4] = {false, true, false, false};
  EXPECT_EQ(next_round_robin(runnable, 4, 1), 1);
  EXPECT_FALSE(others_runnable(runnable, 4, 1));
  EXPECT_TRUE(others_runnable(runnable, 4, 0));
}

TEST(RunQueue, FromIdleStartsAtSlotZero) {
  const bool runnable[4] = {false, true, true, false};
  EXPECT_EQ(next_round_robin(runnable, 4, none), 1);
  EXPECT_TRUE(others_runnable(runnable, 4, none));
}

TEST(RunQueue, EveryRunnableSlotGetsATurn) {
  const bool runnable[8] = {true, false, true, true, false, false, false, true};
  int slot = 0;
  int seen[8] = {};
  for (int turn = 0; turn < 8; ++turn) {
    slot = next_round_robin(runnable, 8, slot);
    ++seen[slot];
  }
  EXPECT_EQ(seen[0], 2);
  EXPECT_EQ(seen[2], 2);
  EXPECT_EQ(seen[3], 2);
  EXPECT_EQ(seen[7], 2);
}
}  // namespace
