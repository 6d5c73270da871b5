// The backend's reading of a guest's PV console ring: free-running indexes, wrap-around, and
// the garbage a hostile guest can write into its indexes.
#include <gtest/gtest.h>
#include <string>
#include "console/guest_ring_reader.h"

namespace console {
namespace {
constexpr uint32_t kSize = 16;

std::string read_all(const char* ring, uint32_t& consumer, uint32_t producer, uint32_t capacity = 64) {
  char out[64];
  RingRead r = read_guest_ring(ring, kSize, consumer, producer, out, capacity);
  consumer = r.consumer;
  return std::string(out, r.length);
}

TEST(ConsoleGuestRing, ReadsWhatWasProduced) {
  char ring[kSize + 1] = "abcdefghijklmnop";
  uint32_t consumer = 0;
  EXPECT_EQ(read_all(ring, consumer, 5), "abcde");
  EXPECT_EQ(consumer, 5u);
  EXPECT_EQ(read_all(ring, consumer, 5), "");
}

TEST(ConsoleGuestRing, WrapsAroundTheRingAndTheIndexes) {
  char ring[kSize + 1] = "abcdefghijklmnop";
  uint32_t consumer = 0xfffffffeu;  // ring index 14
  EXPECT_EQ(read_all(ring, consumer, 3), "opabc");
  EXPECT_EQ(consumer, 3u);
}

TEST(ConsoleGuestRing, AFullRingIsReadWhole) {
  char ring[kSize + 1] = "abcdefghijklmnop";
  uint32_t consumer = 4;
  EXPECT_EQ(read_all(ring, consumer, 4 + kSize), "efghijklmnopabcd");
}

TEST(ConsoleGuestRing, AtMostTheCapacityPerCall) {
  char ring[kSize + 1] = "abcdefghijklmnop";
  uint32_t consumer = 0;
  EXPECT_EQ(read_all(ring, consumer, 10, 4), "abcd");
  EXPECT_EQ(read_all(ring, consumer, 10, 4), "efgh");
  EXPECT_EQ(read_all(ring, consumer, 10, 4), "ij");
}

TEST(ConsoleGuestRing, AProducerFarAheadOrBehindIsSkippedWhole) {
  char ring[kSize + 1] = "abcdefghijklmnop";
  char out[64];
  for (uint32_t producer : {kSize + 1, 0x7fffffffu, 0xffffffffu}) {
    RingRead r = read_guest_ring(ring, kSize, 0, producer, out, sizeof(out));
    EXPECT_TRUE(r.inconsistent) << producer;
    EXPECT_EQ(r.length, 0u);
    EXPECT_EQ(r.consumer, producer) << "the backend resynchronises on the producer";
  }
}
}  // namespace
}  // namespace console
