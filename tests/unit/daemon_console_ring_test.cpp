// pvhvd's console ring arithmetic (tools/daemon/console_ring.h): indexes that wrap, a hostile
// producer index, an input ring that is full, and the page read while the guest writes.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
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

// The guest's console page as a foreign read sees it: copied a word at a time (the relay's
// copies are whole words), with the guest free to write between any two words. The guest writes as hvc_xen does (its
// bytes, then out_prod) and only what fits in the ring.
class ConsoleUnderWrites {
 public:
  explicit ConsoleUnderWrites(uint32_t write_every) : every_(write_every) {}
  std::string written;  // every byte the guest published, in order

  bool read(uint32_t offset, void* out, size_t length) {
    if (offset % 4 || length % 4 || offset + length > page_.size()) return false;
    auto* bytes = static_cast<char*>(out);
    for (size_t i = 0; i < length; i += 4) {  // a word at a time: an index is never torn
      std::memcpy(bytes + i, &page_[offset + i], 4);
      if (every_ && ++copied_ % every_ == 0) guest_writes_a_line();
    }
    return true;
  }
  void consumer_is_at(uint32_t cons) { std::memcpy(&page_[kOutConsOffset], &cons, 4); }
  void quiet() { every_ = 0; }
  void guest_writes_a_line() {
    std::string line = "line " + std::to_string(lines_++) + "\n";
    uint32_t prod = index(kOutProdOffset);
    if (kConsoleOutBytes - (prod - index(kOutConsOffset)) < line.size()) return;  // it would wait
    for (char c : line) page_[kConsoleOutOffset + prod++ % kConsoleOutBytes] = c;
    std::memcpy(&page_[kOutProdOffset], &prod, 4);  // after the bytes (a release store)
    written += line;
  }

 private:
  uint32_t index(size_t offset) const {
    uint32_t value;
    std::memcpy(&value, &page_[offset], 4);
    return value;
  }
  std::vector<char> page_ = std::vector<char>(4096, 0);
  uint32_t every_, copied_ = 0, lines_ = 0;
};

// Whenever the guest writes during the reads, what is drained is exactly what it wrote: no
// byte the index covers is read before the guest wrote it (an index read after out[] would
// take zeros for the last line), none is lost, none is read twice.
TEST(DaemonConsoleRing, AGuestWritingDuringTheReadsLosesNothing) {
  for (uint32_t every : {1u, 2u, 3u, 4u, 5u, 7u, 25u, 100u, 257u, 511u, 512u, 515u, 771u, 772u}) {
    ConsoleUnderWrites console(every);
    std::string drained;
    auto reader = [&](uint32_t offset, void* out, size_t length) { return console.read(offset, out, length); };
    for (int round = 0; round < 40; ++round) {
      console.guest_writes_a_line();  // between two polls too
      auto page = read_console(reader);
      ASSERT_TRUE(page);
      EXPECT_FALSE(page->output.bad_index);
      drained += page->output.bytes;
      console.consumer_is_at(page->output.cons);
    }
    console.quiet();
    auto last = read_console(reader);
    ASSERT_TRUE(last);
    drained += last->output.bytes;
    EXPECT_GT(console.written.size(), 100u) << "writes every " << every << " words";
    EXPECT_EQ(drained, console.written) << "writes every " << every << " words";
  }
}

TEST(DaemonConsoleRing, AFailedReadReadsNothing) {
  auto fails = [](uint32_t, void*, size_t) { return false; };
  EXPECT_FALSE(read_console(fails));
  int reads = 0;  // the indexes read, the output not: nothing drained
  auto second_fails = [&](uint32_t, void* out, size_t length) {
    std::memset(out, 0, length);
    if (length == 16) static_cast<uint32_t*>(out)[3] = 5;  // out_prod: five bytes pending
    return ++reads == 1;
  };
  EXPECT_FALSE(read_console(second_fails));
}

}  // namespace
}  // namespace pvhv::daemon
