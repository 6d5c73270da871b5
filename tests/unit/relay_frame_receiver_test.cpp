// The link's incremental receiver (common/relay/frame_receiver.h): whole frames out, and for
// every kind of bad input an error, after which the next good frame still comes through.
#include <gtest/gtest.h>

#include <vector>

#include "relay_test_support.h"
#include "common/relay/frame_receiver.h"

namespace {
using relay::Error;
using relay::FrameReceiver;
using relay::Received;
using relay_test::frame_bytes;

constexpr uint32_t kMaxPayload = 256;
constexpr uint64_t kStall = 100;

struct Harness {
  std::vector<uint8_t> storage = std::vector<uint8_t>(relay::frame::kHeaderBytes + kMaxPayload);
  FrameReceiver receiver{storage.data(), storage.size(), kMaxPayload, kStall};
  uint64_t now = 1000;

  std::vector<Received> pending;  // what next() said while push() waited for room

  void push(const std::vector<uint8_t>& bytes) {
    size_t done = 0;
    bool stuck = false;
    while (done < bytes.size()) {
      size_t n = receiver.push(bytes.data() + done, bytes.size() - done, now);
      done += n;
      if (n) {
        stuck = false;
        continue;
      }
      // Full: next() makes room, handing something out or skipping what it can.
      Received r = receiver.next(now);
      if (r.kind == Received::Kind::nothing) {
        ASSERT_FALSE(stuck) << "receiver full and next() frees nothing";
        stuck = true;
        continue;
      }
      // (a frame kept here has a payload pointer later pushes invalidate: tests check its type)
      pending.push_back(r);
    }
  }
  // Everything the receiver has to say now.
  std::vector<Received> drain() {
    std::vector<Received> out = pending;
    pending.clear();
    for (Received r = receiver.next(now); r.kind != Received::Kind::nothing; r = receiver.next(now)) out.push_back(r);
    return out;
  }
};

std::vector<uint8_t> payload(uint8_t tag, size_t size = 8) { return std::vector<uint8_t>(size, tag); }

TEST(RelayFrameReceiver, HandsOutWholeFramesInOrder) {
  Harness h;
  auto a = frame_bytes(0x81, payload(1), 7), b = frame_bytes(0x82, payload(2, 200));
  a.insert(a.end(), b.begin(), b.end());
  h.push(a);
  auto got = h.drain();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].kind, Received::Kind::frame);
  EXPECT_EQ(got[0].type, 0x81);
  EXPECT_EQ(got[0].channel, 7);
  EXPECT_EQ(got[1].type, 0x82);
  EXPECT_EQ(got[1].length, 200u);
  EXPECT_EQ(got[1].payload[199], 2);
  EXPECT_EQ(h.receiver.skipped_bytes(), 0u);
}

TEST(RelayFrameReceiver, WaitsForTheRestOfAFrame) {
  Harness h;
  auto f = frame_bytes(0x81, payload(3, 100));
  h.push(std::vector<uint8_t>(f.begin(), f.begin() + 50));
  EXPECT_TRUE(h.drain().empty());
  h.now += kStall - 1;  // not stalled yet
  EXPECT_TRUE(h.drain().empty());
  h.push(std::vector<uint8_t>(f.begin() + 50, f.end()));
  auto got = h.drain();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].kind, Received::Kind::frame);
}

TEST(RelayFrameReceiver, CorruptFrameIsReportedAndTheNextOneSurvives) {
  Harness h;
  auto bad = frame_bytes(0x81, payload(4));
  bad[relay::frame::kHeaderBytes + 3] ^= 0x40;  // payload damaged: CRC no longer holds
  auto good = frame_bytes(0x83, payload(5));
  bad.insert(bad.end(), good.begin(), good.end());
  h.push(bad);
  auto got = h.drain();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].kind, Received::Kind::error);
  EXPECT_EQ(got[0].error, Error::corrupt);
  EXPECT_EQ(got[0].type, 0x81);
  EXPECT_EQ(got[1].kind, Received::Kind::frame);
  EXPECT_EQ(got[1].type, 0x83);
}

TEST(RelayFrameReceiver, TruncatedFrameFollowedByAGoodOne) {
  // The header promises more than comes; the next frame's bytes are taken for its payload, the
  // CRC fails, and the receiver finds the next frame in the bytes it still holds.
  Harness h;
  auto truncated = frame_bytes(0x81, payload(6, 40));
  truncated.resize(relay::frame::kHeaderBytes + 10);
  auto good = frame_bytes(0x84, payload(7, 60));
  truncated.insert(truncated.end(), good.begin(), good.end());
  h.push(truncated);
  auto got = h.drain();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].error, Error::corrupt);
  EXPECT_EQ(got[1].kind, Received::Kind::frame);
  EXPECT_EQ(got[1].type, 0x84);
  EXPECT_EQ(got[1].length, 60u);
}

TEST(RelayFrameReceiver, TruncatedFrameReportedWhenInputStops) {
  Harness h;
  auto f = frame_bytes(0x85, payload(8, 100));
  h.push(std::vector<uint8_t>(f.begin(), f.begin() + 40));
  EXPECT_TRUE(h.drain().empty());
  h.now += kStall;
  auto got = h.drain();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].error, Error::truncated);
  EXPECT_EQ(got[0].type, 0x85);
  EXPECT_EQ(got[0].detail, 40u);
  // Its bytes are gone quietly (no "skipped" report for them) and the link works again.
  h.push(frame_bytes(0x81, payload(9)));
  got = h.drain();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].kind, Received::Kind::frame);
}

TEST(RelayFrameReceiver, TruncatedHeaderReportedWhenInputStops) {
  Harness h;
  auto f = frame_bytes(0x85, payload(8));
  h.push(std::vector<uint8_t>(f.begin(), f.begin() + 9));
  h.now += kStall;
  auto got = h.drain();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].error, Error::truncated);
  EXPECT_FALSE(h.receiver.holding());
}

TEST(RelayFrameReceiver, OversizedFrameReportedAtItsHeaderAndItsPayloadSkipped) {
  Harness h;
  auto big = frame_bytes(0x84, payload(0x50, kMaxPayload + 1), 3);
  auto good = frame_bytes(0x81, payload(1));
  big.insert(big.end(), good.begin(), good.end());
  h.push(std::vector<uint8_t>(big.begin(), big.begin() + relay::frame::kHeaderBytes));
  auto got = h.drain();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].error, Error::oversized);
  EXPECT_EQ(got[0].detail, kMaxPayload + 1);
  EXPECT_EQ(got[0].channel, 3);
  h.push(std::vector<uint8_t>(big.begin() + relay::frame::kHeaderBytes, big.end()));
  h.now += kStall;
  got = h.drain();
  ASSERT_EQ(got.size(), 1u);  // no report for the payload bytes it skipped
  EXPECT_EQ(got[0].kind, Received::Kind::frame);
  EXPECT_EQ(got[0].type, 0x81);
}

TEST(RelayFrameReceiver, GarbageIsReportedOnceBeforeTheNextFrame) {
  Harness h;
  std::vector<uint8_t> bytes = {1, 2, 3, 'P', 'V', 0, 9, 9, 9, 9};
  auto good = frame_bytes(0x81, payload(2));
  bytes.insert(bytes.end(), good.begin(), good.end());
  h.push(bytes);
  auto got = h.drain();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].error, Error::skipped);
  EXPECT_EQ(got[0].detail, 10u);
  EXPECT_EQ(got[1].kind, Received::Kind::frame);
}

TEST(RelayFrameReceiver, GarbageAloneIsReportedWhenInputPauses) {
  Harness h;
  h.push({0xde, 0xad, 0xbe, 0xef, 'P'});
  EXPECT_TRUE(h.drain().empty());
  h.now += kStall;
  auto got = h.drain();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].error, Error::skipped);
  EXPECT_EQ(got[0].detail, 5u);
}

TEST(RelayFrameReceiver, HeaderWithWrongVersionOrHugeLengthIsGarbage) {
  Harness h;
  auto wrong_version = frame_bytes(0x81, payload(1));
  wrong_version[4] = 2;
  auto huge = frame_bytes(0x81, payload(1));
  huge[11] = 0x7f;  // length far beyond the framing's 1 MiB: no header at all
  auto good = frame_bytes(0x82, payload(1));
  std::vector<uint8_t> bytes = wrong_version;
  bytes.insert(bytes.end(), huge.begin(), huge.end());
  bytes.insert(bytes.end(), good.begin(), good.end());
  h.push(bytes);
  auto got = h.drain();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].error, Error::skipped);
  EXPECT_EQ(got[0].detail, wrong_version.size() + huge.size());
  EXPECT_EQ(got[1].type, 0x82);
}

TEST(RelayFrameReceiver, ByteAtATimeAndAFullBufferKeepWorking) {
  Harness h;
  for (int round = 0; round < 20; ++round) {
    auto f = frame_bytes(0x81, payload(uint8_t(round), kMaxPayload));
    for (uint8_t byte : f) ASSERT_EQ(h.receiver.push(&byte, 1, h.now), 1u);
    auto got = h.drain();
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].length, kMaxPayload);
    EXPECT_EQ(got[0].payload[0], round);
  }
  EXPECT_EQ(h.receiver.frames(), 20u);
}

TEST(RelayFrameReceiver, EmptyPayloadFrame) {
  Harness h;
  h.push(frame_bytes(0xa3, {}));
  auto got = h.drain();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].length, 0u);
}
}  // namespace
