// ptwr=adaptive's per-table policy: detach first, emulate a table whose detach periods change
// few entries, detach it again on a run of quiet writes.
#include <gtest/gtest.h>

#include "ptwr/adaptive_policy.h"

namespace ptwr {
namespace {

using P = AdaptivePolicy;
constexpr uint64_t kTable = 0x1234;

// Takes `table` to emulation: kSparsePeriods detach periods of one changed entry each.
void make_sparse(AdaptivePolicy& policy, uint64_t table) {
  for (unsigned i = 0; i < P::kSparsePeriods; ++i) {
    ASSERT_EQ(policy.on_write_fault(table, 0).path, AdaptivePath::detach);
    policy.on_reattached(table, 1);
  }
  ASSERT_TRUE(policy.emulating(table));
}

TEST(PtwrAdaptivePolicy, ANewTableDetaches) {
  AdaptivePolicy policy;
  AdaptiveDecision decision = policy.on_write_fault(kTable, 7);
  EXPECT_EQ(decision.path, AdaptivePath::detach);
  EXPECT_EQ(decision.switched, AdaptiveSwitch::none);
  EXPECT_FALSE(policy.emulating(kTable));
}

TEST(PtwrAdaptivePolicy, OneSparsePeriodIsNotEnough) {
  AdaptivePolicy policy;
  EXPECT_EQ(policy.on_reattached(kTable, 1), AdaptiveSwitch::none);
  EXPECT_EQ(policy.on_write_fault(kTable, 0).path, AdaptivePath::detach);
}

TEST(PtwrAdaptivePolicy, SparsePeriodsInARowSwitchToEmulation) {
  AdaptivePolicy policy;
  for (unsigned i = 1; i < P::kSparsePeriods; ++i) EXPECT_EQ(policy.on_reattached(kTable, 1), AdaptiveSwitch::none);
  EXPECT_EQ(policy.on_reattached(kTable, P::kFewEntries), AdaptiveSwitch::to_emulate);
  EXPECT_TRUE(policy.emulating(kTable));
  EXPECT_EQ(policy.on_write_fault(kTable, 1).path, AdaptivePath::emulate);
}

TEST(PtwrAdaptivePolicy, AFullPeriodBetweenSparseOnesStartsTheCountOver) {
  AdaptivePolicy policy;
  policy.on_reattached(kTable, 1);
  policy.on_reattached(kTable, P::kFewEntries + 1);  // a run: detaching paid
  for (unsigned i = 1; i < P::kSparsePeriods; ++i) policy.on_reattached(kTable, 0);
  EXPECT_FALSE(policy.emulating(kTable));
  policy.on_reattached(kTable, 0);
  EXPECT_TRUE(policy.emulating(kTable));
}

// Demand paging: the guest returns to user mode between two writes (the activity count moves),
// so the table stays emulated however many writes come.
TEST(PtwrAdaptivePolicy, SparseWritesStayEmulated) {
  AdaptivePolicy policy;
  make_sparse(policy, kTable);
  for (uint64_t activity = 100; activity < 100 + 10000; activity += 2) {
    AdaptiveDecision decision = policy.on_write_fault(kTable, activity);
    ASSERT_EQ(decision.path, AdaptivePath::emulate) << activity;
    ASSERT_EQ(decision.switched, AdaptiveSwitch::none);
  }
}

// Fork write-protecting a table: writes with nothing between them detach it at the run's end.
TEST(PtwrAdaptivePolicy, ARunOfQuietWritesDetaches) {
  AdaptivePolicy policy;
  make_sparse(policy, kTable);
  for (unsigned i = 1; i < P::kRunLength; ++i) ASSERT_EQ(policy.on_write_fault(kTable, 42).path, AdaptivePath::emulate);
  AdaptiveDecision decision = policy.on_write_fault(kTable, 42);
  EXPECT_EQ(decision.path, AdaptivePath::detach);
  EXPECT_EQ(decision.switched, AdaptiveSwitch::to_detach);
  EXPECT_FALSE(policy.emulating(kTable));
  EXPECT_EQ(policy.on_write_fault(kTable, 42).path, AdaptivePath::detach);  // until a period says otherwise
}

TEST(PtwrAdaptivePolicy, ActivityInTheMiddleBreaksARun) {
  AdaptivePolicy policy;
  make_sparse(policy, kTable);
  for (unsigned i = 1; i < P::kRunLength; ++i) policy.on_write_fault(kTable, 5);
  EXPECT_EQ(policy.on_write_fault(kTable, 6).path, AdaptivePath::emulate);  // a new run of one
  for (unsigned i = 2; i < P::kRunLength; ++i) EXPECT_EQ(policy.on_write_fault(kTable, 6).path, AdaptivePath::emulate);
  EXPECT_EQ(policy.on_write_fault(kTable, 6).path, AdaptivePath::detach);
}

// The 1-entry pathology: detach, one entry, rehook, over and over. After kSparsePeriods cycles
// the table is emulated and no further cycle happens for sparse writes.
TEST(PtwrAdaptivePolicy, TheOneEntryCycleStopsAfterTheHysteresis) {
  AdaptivePolicy policy;
  unsigned detaches = 0;
  for (uint64_t fault = 0; fault < 1000; ++fault) {
    if (policy.on_write_fault(kTable, fault * 3).path == AdaptivePath::detach) {
      ++detaches;
      policy.on_reattached(kTable, 1);
    }
  }
  EXPECT_EQ(detaches, P::kSparsePeriods);
}

// A mixed pattern, per round: a storm of sparse writes, then a run. Each round pays at most
// kRunLength - 1 emulated writes of the run and kSparsePeriods cycles of the storm.
TEST(PtwrAdaptivePolicy, MixedRoundsPayBoundedOverheads) {
  AdaptivePolicy policy;
  uint64_t activity = 0;
  for (unsigned round = 0; round < 5; ++round) {
    unsigned storm_detaches = 0, run_emulations = 0;
    for (unsigned page = 0; page < 300; ++page) {
      activity += 2;  // the user fault bounced and the iret back
      if (policy.on_write_fault(kTable, activity).path == AdaptivePath::detach) {
        ++storm_detaches;
        policy.on_reattached(kTable, 1);
      }
    }
    EXPECT_LE(storm_detaches, P::kSparsePeriods) << round;
    ++activity;  // the fork system call
    bool detached = false;
    for (unsigned entry = 0; entry < 512 && !detached; ++entry) {
      if (policy.on_write_fault(kTable, activity).path == AdaptivePath::detach)
        detached = true;
      else
        ++run_emulations;
    }
    ASSERT_TRUE(detached);
    policy.on_reattached(kTable, 512 - run_emulations);
    EXPECT_LE(run_emulations, P::kRunLength - 1) << round;
  }
}

TEST(PtwrAdaptivePolicy, TablesAreIndependent) {
  AdaptivePolicy policy;
  make_sparse(policy, kTable);
  EXPECT_EQ(policy.on_write_fault(kTable + 1, 0).path, AdaptivePath::detach);
  EXPECT_TRUE(policy.emulating(kTable));
}

// Two frames sharing a slot: the newcomer starts as a new table, and so does the old one after.
TEST(PtwrAdaptivePolicy, ATableInTheSameSlotStartsOver) {
  AdaptivePolicy policy;
  make_sparse(policy, kTable);
  const uint64_t other = kTable + P::kTables;
  EXPECT_FALSE(policy.emulating(other));
  EXPECT_EQ(policy.on_write_fault(other, 0).path, AdaptivePath::detach);
  EXPECT_FALSE(policy.emulating(kTable));
  EXPECT_EQ(policy.on_write_fault(kTable, 0).path, AdaptivePath::detach);
}

TEST(PtwrAdaptivePolicy, ResetForgetsEveryTable) {
  AdaptivePolicy policy;
  make_sparse(policy, kTable);
  policy.reset();
  EXPECT_FALSE(policy.emulating(kTable));
  EXPECT_EQ(policy.on_write_fault(kTable, 0).path, AdaptivePath::detach);
}

// The tag is the frame number + 1, so frame 0 is a table like any other, not a free slot.
TEST(PtwrAdaptivePolicy, FrameZeroIsATable) {
  AdaptivePolicy policy;
  make_sparse(policy, 0);
  EXPECT_TRUE(policy.emulating(0));
}

}  // namespace
}  // namespace ptwr
