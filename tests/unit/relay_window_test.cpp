// The bulk window's rings (common/relay/window.h): bytes in order across the wrap, a full ring
// takes nothing more, and a peer's impossible index (a head more than a ring ahead, a tail
// ahead of the head) is a broken ring, never a read or write outside it.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "common/relay/window.h"

namespace {
namespace win = relay::window;

struct Ring {
  win::RingIndex index{};
  std::vector<uint8_t> bytes = std::vector<uint8_t>(64, 0);
  uint32_t size() const { return uint32_t(bytes.size()); }
  size_t write(const std::vector<uint8_t>& data) {
    return win::ring_write(index, bytes.data(), size(), data.data(), data.size());
  }
  std::vector<uint8_t> read(size_t capacity, bool& broken) {
    std::vector<uint8_t> out(capacity);
    out.resize(win::ring_read(index, bytes.data(), size(), out.data(), capacity, broken));
    return out;
  }
};

std::vector<uint8_t> counting(size_t n, uint8_t first) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = uint8_t(first + i);
  return v;
}

TEST(RelayWindow, LayoutFitsTheBackend) {
  EXPECT_EQ(offsetof(win::Header, to_dom0), 64u);
  EXPECT_EQ(offsetof(win::Header, to_host), 192u);
  EXPECT_LE(win::kToHostOffset + win::kRingBytes, win::kBytes);
  EXPECT_GE(win::kRingBytes, 2 * (16 + 32832u));  // a whole largest request, twice
}

TEST(RelayWindow, BytesArriveInOrderAcrossTheWrap) {
  Ring r;
  bool broken = true;
  for (int round = 0; round < 10; ++round) {  // 10 x 40 bytes through a 64-byte ring
    auto data = counting(40, uint8_t(round * 40));
    ASSERT_EQ(r.write(data), 40u);
    EXPECT_EQ(r.read(100, broken), data);
    EXPECT_FALSE(broken);
  }
  EXPECT_EQ(r.index.head, 400u);
  EXPECT_EQ(r.index.tail, 400u);
}

TEST(RelayWindow, AFullRingTakesNothingMore) {
  Ring r;
  bool broken = false;
  EXPECT_EQ(r.write(counting(100, 0)), 64u);
  EXPECT_EQ(r.write(counting(1, 0)), 0u);
  EXPECT_EQ(r.read(10, broken), counting(10, 0));
  EXPECT_EQ(r.write(counting(20, 100)), 10u);  // exactly the room read
}

TEST(RelayWindow, TheCountersMayWrapAround) {
  Ring r;
  r.index.head = r.index.tail = 0xfffffff0u;
  bool broken = true;
  auto data = counting(32, 7);
  ASSERT_EQ(r.write(data), 32u);
  EXPECT_EQ(r.index.head, 0x10u);
  EXPECT_EQ(r.read(64, broken), data);
  EXPECT_FALSE(broken);
}

TEST(RelayWindow, AnImpossibleHeadIsABrokenRing) {
  Ring r;
  r.index.head = 65;  // more than a ring ahead of the tail: a peer writing garbage
  bool broken = false;
  EXPECT_TRUE(r.read(1000, broken).empty());
  EXPECT_TRUE(broken);
  EXPECT_EQ(r.index.tail, 65u);  // dropped: the next bytes are read from there
  r.index.head = 70;
  EXPECT_EQ(r.read(1000, broken).size(), 5u);
  EXPECT_FALSE(broken);
}

TEST(RelayWindow, ATailAheadOfTheHeadTakesNoWrite) {
  Ring r;
  r.index.tail = 10;  // the consumer claims bytes never written
  EXPECT_EQ(r.write(counting(8, 0)), 0u);
  EXPECT_EQ(r.index.head, 0u);
}

TEST(RelayWindow, DiscardDropsWhatWaits) {
  Ring r;
  r.write(counting(30, 0));
  win::ring_discard(r.index);
  bool broken = false;
  EXPECT_TRUE(r.read(64, broken).empty());
}

}  // namespace
