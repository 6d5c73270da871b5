#include "control/domain_teardown.h"

#include <gtest/gtest.h>

#include <vector>

#include "abi/xen_abi.h"

namespace {
using control::DomainTeardown;
using control::Dying;
using control::TeardownStep;
using control::TeardownWork;

// Runs the teardown to its end, `pieces_per_call` pieces per "hypercall", and records every
// piece done.
std::vector<TeardownWork> run(DomainTeardown& teardown, uint64_t frames, unsigned pieces_per_call, unsigned& calls) {
  std::vector<TeardownWork> done;
  calls = 0;
  while (teardown.state() != Dying::dead) {
    ++calls;
    EXPECT_EQ(teardown.begin(false), 0);
    for (unsigned piece = 0; piece < pieces_per_call; ++piece) {
      TeardownWork work = teardown.next(frames);
      if (work.step == TeardownStep::done) break;
      done.push_back(work);
      teardown.finished(work);
    }
    if (calls > 10000) break;
  }
  return done;
}

TEST(DomainTeardown, TheCallerItselfIsEinval) {
  DomainTeardown teardown;
  EXPECT_EQ(teardown.begin(true), -XEN_EINVAL);
  EXPECT_EQ(teardown.state(), Dying::alive) << "refused: nothing changes";
}

TEST(DomainTeardown, AliveDyingDead) {
  DomainTeardown teardown;
  EXPECT_TRUE(teardown.alive());
  EXPECT_EQ(teardown.next(100).step, TeardownStep::done) << "no work while alive";
  ASSERT_EQ(teardown.begin(false), 0);
  EXPECT_EQ(teardown.state(), Dying::dying);
  unsigned calls = 0;
  std::vector<TeardownWork> pieces = run(teardown, 100, 1000, calls);
  EXPECT_EQ(teardown.state(), Dying::dead);
  EXPECT_EQ(calls, 1u);
  ASSERT_FALSE(pieces.empty());
  EXPECT_EQ(pieces.front().step, TeardownStep::vcpu_state);
  EXPECT_EQ(pieces.back().step, TeardownStep::shared_info);
  EXPECT_EQ(teardown.begin(false), 0) << "destroying a dead domain again is 0, as Xen";
  EXPECT_EQ(teardown.state(), Dying::dead);
}

TEST(DomainTeardown, StepsInXensOrderAndEveryFrameScannedOncePerScan) {
  DomainTeardown teardown;
  teardown.begin(false);
  const uint64_t frames = DomainTeardown::frames_per_piece * 3 + 17;
  unsigned calls = 0;
  std::vector<TeardownWork> pieces = run(teardown, frames, 1000, calls);
  std::vector<uint64_t> scanned[2] = {std::vector<uint64_t>(frames), std::vector<uint64_t>(frames)};
  uint8_t last_step = 0;
  for (const TeardownWork& work : pieces) {
    EXPECT_GE(uint8_t(work.step), last_step) << "steps never go back";
    last_step = uint8_t(work.step);
    EXPECT_LE(work.end - work.first, DomainTeardown::frames_per_piece);
    if (work.step != TeardownStep::unpin_tables && work.step != TeardownStep::release_frames) continue;
    for (uint64_t mfn = work.first; mfn < work.end; ++mfn) ++scanned[work.step == TeardownStep::release_frames][mfn];
  }
  for (const auto& scan : scanned)
    for (uint64_t mfn = 0; mfn < frames; ++mfn) ASSERT_EQ(scan[mfn], 1u) << mfn;
}

TEST(DomainTeardown, PreemptedAfterEveryPieceItStillEnds) {
  DomainTeardown whole, preempted;
  whole.begin(false);
  preempted.begin(false);
  const uint64_t frames = 10000;
  unsigned whole_calls = 0, preempted_calls = 0;
  std::vector<TeardownWork> a = run(whole, frames, 1000, whole_calls);
  std::vector<TeardownWork> b = run(preempted, frames, 1, preempted_calls);
  EXPECT_EQ(preempted.state(), Dying::dead);
  ASSERT_EQ(a.size(), b.size()) << "continuations do the same pieces, none twice";
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].step, b[i].step);
    EXPECT_EQ(a[i].first, b[i].first);
  }
  EXPECT_EQ(preempted_calls, b.size()) << "each call makes progress, the last one ends it";
}

TEST(DomainTeardown, AStalePieceIsIgnored) {
  DomainTeardown teardown;
  teardown.begin(false);
  TeardownWork first = teardown.next(10);
  teardown.finished(first);
  teardown.finished(first);  // again: it is no longer the step in progress
  EXPECT_EQ(teardown.next(10).step, TeardownStep::event_channels);
}
}  // namespace

namespace {
// A scan visits the domain's frames as many times as it had frames when the step began: the
// visits free frames, so the count given on later calls shrinks, and must not cut the scan short.
TEST(DomainTeardown, AScanKeepsTheLengthItBeganWith) {
  DomainTeardown teardown;
  teardown.begin(false);
  const uint64_t at_start = DomainTeardown::frames_per_piece * 2 + 5;
  uint64_t visits[2] = {0, 0};
  uint64_t frames_now = at_start;
  for (TeardownWork work = teardown.next(frames_now); work.step != TeardownStep::done;
       work = teardown.next(frames_now)) {
    const bool scan = work.step == TeardownStep::unpin_tables || work.step == TeardownStep::release_frames;
    if (scan) {
      EXPECT_EQ(work.length, at_start);
      visits[work.step == TeardownStep::release_frames] += work.end - work.first;
      if (work.step == TeardownStep::release_frames) frames_now = frames_now > 1000 ? frames_now - 1000 : 0;
    } else {
      frames_now = at_start;  // a new scan begins with the count as it is then
    }
    teardown.finished(work);
  }
  EXPECT_EQ(visits[0], at_start);
  EXPECT_EQ(visits[1], at_start);
}
}  // namespace
