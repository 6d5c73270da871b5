#include "sched/run_queue.h"

#include <gtest/gtest.h>

namespace {
using run_queue::next_round_robin;
using run_queue::none;
using run_queue::place;

TEST(RunQueue, NothingRunnableIsNone) {
  EXPECT_EQ(next_round_robin(nullptr, 0, 0), none);
  EXPECT_EQ(next_round_robin(nullptr, 0, none), none);
}

TEST(RunQueue, NextAfterCurrentWrapsAround) {
  const int runnable[] = {0, 2};
  EXPECT_EQ(next_round_robin(runnable, 2, 0), 2);
  EXPECT_EQ(next_round_robin(runnable, 2, 2), 0);
  EXPECT_EQ(next_round_robin(runnable, 2, 3), 0);
}

TEST(RunQueue, CurrentContinuesOnlyWhenAlone) {
  const int runnable[] = {1};
  EXPECT_EQ(next_round_robin(runnable, 1, 1), 1);
  EXPECT_EQ(next_round_robin(runnable, 1, 0), 1);
}

TEST(RunQueue, FromIdleStartsAtPlaceZero) {
  const int runnable[] = {1, 2};
  EXPECT_EQ(next_round_robin(runnable, 2, none), 1);
}

TEST(RunQueue, EveryRunnablePlaceGetsATurn) {
  const int runnable[] = {0, 2, 3, 7};
  int current = 0;
  int seen[8] = {};
  for (int turn = 0; turn < 8; ++turn) {
    current = next_round_robin(runnable, 4, current);
    ++seen[current];
  }
  EXPECT_EQ(seen[0], 2);
  EXPECT_EQ(seen[2], 2);
  EXPECT_EQ(seen[3], 2);
  EXPECT_EQ(seen[7], 2);
}

// The vCPUs of one domain take their turns one after another, then the next domain's: a
// domain with four vCPUs gets four turns per round, one with one vCPU one.
TEST(RunQueue, PlacesOrderDomainsThenTheirVcpus) {
  constexpr unsigned per_slot = 8;
  EXPECT_EQ(place(0, per_slot, 0), 0);
  EXPECT_EQ(place(0, per_slot, 7), 7);
  EXPECT_EQ(place(1, per_slot, 0), 8);
  EXPECT_EQ(place(31, per_slot, 7), 255);
  const int runnable[] = {place(0, per_slot, 0), place(0, per_slot, 1), place(0, per_slot, 3), place(2, per_slot, 0)};
  int order[5];
  int current = none;
  for (int& next : order) next = current = next_round_robin(runnable, 4, current);
  EXPECT_EQ(order[0], 0);
  EXPECT_EQ(order[1], 1);
  EXPECT_EQ(order[2], 3);
  EXPECT_EQ(order[3], 16);
  EXPECT_EQ(order[4], 0);
}

// A vCPU that stopped being runnable (blocked, down) is skipped from where it was.
TEST(RunQueue, AfterAVcpuThatLeftTheRound) {
  const int runnable[] = {0, 9};
  EXPECT_EQ(next_round_robin(runnable, 2, 3), 9);
  EXPECT_EQ(next_round_robin(runnable, 2, 10), 0);
}
}  // namespace
