// The serial transmit ring: bytes come out in order, a full ring takes nothing, the indexes
// wrap around the buffer.
#include <gtest/gtest.h>
#include <string>
#include "console/serial_tx_ring.h"

namespace console {
namespace {
std::string pop_all(SerialTxRing& ring) {
  std::string out;
  while (!ring.empty()) out += ring.pop();
  return out;
}

TEST(ConsoleSerialTxRing, BytesComeOutInOrder) {
  char storage[8];
  SerialTxRing ring(storage, 8);
  EXPECT_TRUE(ring.empty());
  for (char c : std::string("abc")) EXPECT_TRUE(ring.push(c));
  EXPECT_EQ(ring.used(), 3u);
  EXPECT_EQ(ring.room(), 5u);
  EXPECT_EQ(pop_all(ring), "abc");
}

TEST(ConsoleSerialTxRing, AFullRingTakesNothing) {
  char storage[4];
  SerialTxRing ring(storage, 4);
  for (char c : std::string("wxyz")) ASSERT_TRUE(ring.push(c));
  EXPECT_TRUE(ring.full());
  EXPECT_EQ(ring.room(), 0u);
  EXPECT_FALSE(ring.push('!'));
  EXPECT_EQ(ring.pop(), 'w');
  EXPECT_TRUE(ring.push('!'));
  EXPECT_EQ(pop_all(ring), "xyz!");
}

TEST(ConsoleSerialTxRing, WrapsAroundTheBufferManyTimes) {
  char storage[4];
  SerialTxRing ring(storage, 4);
  std::string out;
  for (int i = 0; i < 1000; ++i) {
    ASSERT_TRUE(ring.push(char('a' + i % 26)));
    ASSERT_TRUE(ring.push(char('A' + i % 26)));
    out += ring.pop();
    out += ring.pop();
    ASSERT_TRUE(ring.empty());
  }
  EXPECT_EQ(out.substr(0, 6), "aAbBcC");
  EXPECT_EQ(out.size(), 2000u);
}
}  // namespace
}  // namespace console
