// The serial transmit ring (bytes come out in order, a full ring takes nothing, the indexes
// wrap around the buffer) and the transmitter that feeds a UART from it.
#include <gtest/gtest.h>
#include <string>
#include "console/serial_transmitter.h"
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

namespace console {
namespace {
// A UART that takes a FIFO's worth only when `ready` (as a 16550 at 115200 baud: its FIFO
// empties 1.4 ms after the last write).
struct SlowUart {
  bool ready_now = true;
  std::string line;  // what reached the wire, in order
  bool ready() const { return ready_now; }
  void write(char c) { line += c; }
};

TEST(ConsoleSerialTransmitter, AReadyUartTakesBytesAtOnce) {
  SlowUart uart;
  char storage[64];
  SerialTransmitter<SlowUart> tx(uart, storage, 64);
  for (char c : std::string("hello")) tx.put(c);
  EXPECT_EQ(uart.line, "hello");
  EXPECT_FALSE(tx.pending());
}

TEST(ConsoleSerialTransmitter, ABusyUartLeavesBytesWaitingInOrder) {
  SlowUart uart;
  char storage[64];
  SerialTransmitter<SlowUart> tx(uart, storage, 64);
  tx.put('a');
  uart.ready_now = false;
  for (char c : std::string("bcd")) tx.put(c);
  EXPECT_EQ(uart.line, "a");
  EXPECT_TRUE(tx.pending());
  uart.ready_now = true;
  tx.put('e');  // goes behind what waits, never before it
  EXPECT_EQ(uart.line, "abcde");
  EXPECT_FALSE(tx.pending());
}

TEST(ConsoleSerialTransmitter, APollMovesAtMostAFifosWorth) {
  SlowUart uart;
  uart.ready_now = false;
  char storage[64];
  SerialTransmitter<SlowUart> tx(uart, storage, 64);
  for (int i = 0; i < 40; ++i) tx.put(char('0' + i % 10));
  EXPECT_EQ(uart.line, "");
  EXPECT_FALSE(tx.has_room(25));
  EXPECT_TRUE(tx.has_room(24));
  tx.poll();  // not ready: nothing moves
  EXPECT_EQ(uart.line, "");
  uart.ready_now = true;
  tx.poll();
  EXPECT_EQ(uart.line.size(), 16u);
  tx.poll();
  EXPECT_EQ(uart.line.size(), 32u);
  tx.flush();
  EXPECT_EQ(uart.line, "0123456789012345678901234567890123456789");
}

// A UART that becomes ready only every third look: a full ring waits for it, loses nothing.
struct SluggishUart {
  mutable unsigned looks = 0;
  std::string line;
  bool ready() const { return ++looks % 3 == 0; }
  void write(char c) { line += c; }
};

TEST(ConsoleSerialTransmitter, AFullRingWaitsForTheUartAndLosesNothing) {
  SluggishUart uart;
  char storage[8];
  SerialTransmitter<SluggishUart> tx(uart, storage, 8);
  std::string text;
  for (int i = 0; i < 200; ++i) text += char('a' + i % 26);
  for (char c : text) tx.put(c);
  tx.flush();
  EXPECT_EQ(uart.line, text);
  EXPECT_FALSE(tx.pending());
}
}  // namespace
}  // namespace console
