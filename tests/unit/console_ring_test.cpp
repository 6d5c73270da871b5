#include "console/console_ring.h"

#include <gtest/gtest.h>

#include <string>

namespace {
using console::ConsoleRing;

std::string text_of(const ConsoleRing::Read& read) {
  std::string text;
  for (unsigned i = 0; i < read.piece_count; ++i) text.append(read.pieces[i].bytes, read.pieces[i].length);
  EXPECT_EQ(text.size(), read.total);
  return text;
}

struct Ring {
  explicit Ring(uint32_t start = 0) : ring(storage, sizeof(storage), start) {}
  void put(const std::string& text) { ring.put(text.data(), text.size()); }
  char storage[16];
  ConsoleRing ring;
};

TEST(ConsoleRing, ReadsEverythingFromTheConsumer) {
  Ring r;
  r.put("hello ");
  r.put("world");
  ConsoleRing::Read read = r.ring.plan_read(false, 0, 100);
  EXPECT_EQ(text_of(read), "hello world");
  EXPECT_EQ(read.end, 11u);
  EXPECT_EQ(r.ring.unread(), 11u) << "reading without clear consumes nothing";
  EXPECT_EQ(text_of(r.ring.plan_read(false, 0, 100)), "hello world");
}

TEST(ConsoleRing, EmptyRingReadsNothing) {
  Ring r;
  ConsoleRing::Read read = r.ring.plan_read(false, 0, 100);
  EXPECT_EQ(read.total, 0u);
  EXPECT_EQ(read.piece_count, 0u);
  EXPECT_EQ(read.end, 0u);
}

TEST(ConsoleRing, CountLimitsTheRead) {
  Ring r;
  r.put("abcdefgh");
  ConsoleRing::Read read = r.ring.plan_read(false, 0, 3);
  EXPECT_EQ(text_of(read), "abc");
  EXPECT_EQ(read.end, 3u);
  EXPECT_EQ(r.ring.plan_read(false, 0, 0).total, 0u);
}

TEST(ConsoleRing, OutputOvertakingTheConsumerLosesTheOldest) {
  Ring r;
  r.put("0123456789");
  r.put("abcdefghij");  // 20 bytes into 16
  EXPECT_EQ(r.ring.unread(), 16u);
  EXPECT_EQ(r.ring.consumer(), 4u);
  ConsoleRing::Read read = r.ring.plan_read(false, 0, 100);
  EXPECT_EQ(read.piece_count, 2u) << "the bytes wrap around the buffer's end";
  EXPECT_EQ(text_of(read), "456789abcdefghij");
  EXPECT_EQ(read.end, 20u);
}

TEST(ConsoleRing, IncrementalContinuesWhereTheLastReadStopped) {
  Ring r;
  r.put("first ");
  ConsoleRing::Read first = r.ring.plan_read(true, 0, 100);
  EXPECT_EQ(text_of(first), "first ");
  r.put("second");
  ConsoleRing::Read second = r.ring.plan_read(true, first.end, 100);
  EXPECT_EQ(text_of(second), "second");
  EXPECT_EQ(r.ring.plan_read(true, second.end, 100).total, 0u) << "nothing new";
  EXPECT_EQ(r.ring.plan_read(true, second.end, 100).end, second.end);
}

TEST(ConsoleRing, IncrementalInPieces) {
  Ring r;
  r.put("abcdefghij");
  std::string all;
  uint32_t index = 0;
  for (int i = 0; i < 10; ++i) {
    ConsoleRing::Read read = r.ring.plan_read(true, index, 3);
    all += text_of(read);
    index = read.end;
  }
  EXPECT_EQ(all, "abcdefghij");
}

TEST(ConsoleRing, IncrementalIndexOutsideTheRingStartsAtTheConsumer) {
  Ring r;
  r.put("0123456789abcdefXYZ");  // consumer at 3, producer at 19
  EXPECT_EQ(text_of(r.ring.plan_read(true, 1, 100)), "3456789abcdefXYZ") << "index lost to overwriting";
  EXPECT_EQ(text_of(r.ring.plan_read(true, 3, 100)), "3456789abcdefXYZ") << "index at the consumer";
  EXPECT_EQ(text_of(r.ring.plan_read(true, 40, 100)), "3456789abcdefXYZ") << "index beyond the producer";
  EXPECT_EQ(text_of(r.ring.plan_read(true, 19, 100)), "") << "index at the producer: nothing new";
  EXPECT_EQ(text_of(r.ring.plan_read(true, 17, 100)), "YZ");
  EXPECT_EQ(text_of(r.ring.plan_read(false, 17, 100)), "3456789abcdefXYZ") << "not incremental: index ignored";
}

TEST(ConsoleRing, ClearMovesTheConsumerToTheReadsEnd) {
  Ring r;
  r.put("abcdefgh");
  ConsoleRing::Read read = r.ring.plan_read(false, 0, 3);
  r.ring.consume_to(read.end);
  EXPECT_EQ(text_of(r.ring.plan_read(false, 0, 100)), "defgh");
  ConsoleRing::Read rest = r.ring.plan_read(false, 0, 100);
  r.ring.consume_to(rest.end);
  EXPECT_EQ(r.ring.unread(), 0u);
  EXPECT_EQ(r.ring.plan_read(false, 0, 100).total, 0u);
  r.put("new");
  EXPECT_EQ(text_of(r.ring.plan_read(false, 0, 100)), "new");
}

TEST(ConsoleRing, IndexesWrapAround32Bits) {
  Ring r(0xfffffff8u);
  r.put("0123456789abcdef");  // the producer passes 2^32
  EXPECT_EQ(r.ring.producer(), 8u);
  EXPECT_EQ(r.ring.consumer(), 0xfffffff8u);
  ConsoleRing::Read all = r.ring.plan_read(false, 0, 100);
  EXPECT_EQ(text_of(all), "0123456789abcdef");
  EXPECT_EQ(all.end, 8u);
  // An incremental index on either side of the wrap.
  EXPECT_EQ(text_of(r.ring.plan_read(true, 0xfffffffcu, 100)), "456789abcdef");
  EXPECT_EQ(text_of(r.ring.plan_read(true, 2u, 100)), "abcdef");
  EXPECT_EQ(text_of(r.ring.plan_read(true, 0xfffffff0u, 100)), "0123456789abcdef") << "before the consumer";
  r.put("XY");
  EXPECT_EQ(r.ring.consumer(), 0xfffffffau);
  EXPECT_EQ(text_of(r.ring.plan_read(false, 0, 100)), "23456789abcdefXY");
  ConsoleRing::Read part = r.ring.plan_read(false, 0, 10);
  r.ring.consume_to(part.end);
  EXPECT_EQ(r.ring.consumer(), 4u);
  EXPECT_EQ(text_of(r.ring.plan_read(false, 0, 100)), "cdefXY");
}

TEST(ConsoleRing, LongOutputKeepsTheLastBytes) {
  Ring r;
  std::string expected;
  for (int i = 0; i < 1000; ++i) {
    std::string line = "line " + std::to_string(i) + "\n";
    r.put(line);
    expected += line;
  }
  EXPECT_EQ(text_of(r.ring.plan_read(false, 0, 100)), expected.substr(expected.size() - 16));
}
}  // namespace
