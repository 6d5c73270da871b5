// pvhvd's console ring arithmetic (tools/daemon/console_ring.h): indexes that wrap, a hostile
// producer index, an input ring that is full.
#include <gtest/gtest.h>

#include <vector>

#include "tools/daemon/console_ring.h"

namespace pvhv::daemon {
namespace {

TEST(DaemonConsoleRing, DrainsWhatWasWritten) {
  std::vector<char> ring(kConsoleOutBytes, 0);
  std::string text = "init exited: status 0\n";
  for (size_t i = 0; i < text.size(); ++i) ring[i] = text[i];
  auto drained = drain_output(0, uint32_t(text.size()), ring);
  EXPECT_EQ(drained.bytes, text);
  EXPECT_EQ(drained.cons, text.size());
  EXPECT_FALSE(drained.bad_index);
  EXPECT_TRUE(drain_output(5, 5, ring).bytes.empty());
}

TEST(DaemonConsoleRing, IndexesWrapAt32Bits) {
  std::vector<char> ring(kConsoleOutBytes, 0);
  uint32_t cons = 0xfffffffe;
  ring[cons % kConsoleOutBytes] = 'a';
  ring[(cons + 1) % kConsoleOutBytes] = 'b';
  ring[(cons + 2) % kConsoleOutBytes] = 'c';
  auto drained = drain_output(cons, cons + 3, ring);
  EXPECT_EQ(drained.bytes, "abc");
  EXPECT_EQ(drained.cons, 1u);
}

TEST(DaemonConsoleRing, HostileProducerGetsAtMostTheRing) {
  std::vector<char> ring(kConsoleOutBytes, 'x');
  auto drained = drain_output(0, 0x80000000u, ring);
  EXPECT_TRUE(drained.bad_index);
  EXPECT_EQ(drained.bytes.size(), kConsoleOutBytes);
  EXPECT_EQ(drained.cons, 0x80000000u);
}

TEST(DaemonConsoleRing, InputTakesOnlyTheRoom) {
  std::string pending(1500, 'k');
  auto fill = fill_input(0, 0, pending);
  EXPECT_EQ(fill.taken, kConsoleInBytes);
  EXPECT_EQ(fill.prod, kConsoleInBytes);
  fill = fill_input(0, uint32_t(kConsoleInBytes), pending);  // full: nothing goes in
  EXPECT_EQ(fill.taken, 0u);
  fill = fill_input(1020, 1020, "hello");  // wraps: written from offset 1020
  EXPECT_EQ(fill.offset, 1020u);
  EXPECT_EQ(fill.taken, 5u);
  EXPECT_EQ(fill.prod, 1025u);
  fill = fill_input(0, 0xfffff000u, "x");  // a nonsense guest index: no room, nothing written
  EXPECT_EQ(fill.taken, 0u);
}

}  // namespace
}  // namespace pvhv::daemon
