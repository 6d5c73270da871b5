// A client's output queue: answers kept, console bytes bounded, oldest dropped first
// (tools/daemon/output_queue.h).
#include <gtest/gtest.h>

#include <string>

#include "tools/daemon/output_queue.h"

namespace pvhv::daemon {
namespace {

// Everything still queued, written out in order.
std::string drain(OutputQueue& q) {
  std::string all;
  while (!q.empty()) {
    all += q.begin_write();
    q.end_write();
  }
  return all;
}

TEST(OutputQueue, AConsoleClientThatNeverReadsCostsTheBoundNoMore) {
  OutputQueue q;
  const std::string line(100, 'x');
  for (int i = 0; i < 50000; ++i) q.push(line, true);  // 5 MB of console output
  EXPECT_LE(q.droppable_bytes(), OutputQueue::kConsoleLimit);
  EXPECT_EQ(q.droppable_bytes() + q.dropped_bytes(), 5000000u);
  EXPECT_EQ(drain(q).size(), OutputQueue::kConsoleLimit);
}

TEST(OutputQueue, TheOldestConsoleBytesGoAnswersAndThePieceBeingWrittenStay) {
  OutputQueue q(10);
  q.push("{\"ok\":true}\n", false);  // the console's answer, 12 bytes: never dropped
  q.push("abcdef", true);
  EXPECT_EQ(q.begin_write(), "{\"ok\":true}\n");  // being written: kept whole
  q.push("ghijkl", true);                         // 12 console bytes: the 2 oldest go
  EXPECT_EQ(q.dropped_bytes(), 2u);
  q.push("0123456789", true);  // 10 more: everything older goes
  EXPECT_EQ(q.dropped_bytes(), 12u);
  q.push("answer\n", false);
  q.end_write();
  EXPECT_EQ(drain(q), "0123456789answer\n");
}

TEST(OutputQueue, AConsolePieceBeingWrittenIsNeitherDroppedNorCounted) {
  OutputQueue q(8);
  q.push("12345678", true);
  EXPECT_EQ(q.begin_write(), "12345678");
  EXPECT_EQ(q.droppable_bytes(), 0u);
  q.push("abcdefgh", true);  // within the bound again: the piece in flight is no longer queued
  EXPECT_EQ(q.dropped_bytes(), 0u);
  q.push("XY", true);  // 10 queued: the 2 oldest of them go, not the piece in flight
  EXPECT_EQ(q.dropped_bytes(), 2u);
  q.end_write();
  EXPECT_EQ(drain(q), "cdefghXY");
}

TEST(OutputQueue, WithinTheBoundNothingIsDroppedAndOrderHolds) {
  OutputQueue q(100);
  q.push("a", false);
  q.push("b", true);
  q.push("c", false);
  q.push("d", true);
  EXPECT_EQ(q.dropped_bytes(), 0u);
  EXPECT_EQ(drain(q), "abcd");
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.droppable_bytes(), 0u);
}

}  // namespace
}  // namespace pvhv::daemon
