// Pure: the hypervisor's console ring, which every hypervisor console line also goes to, as
// Xen's conring: a fixed-size power-of-two buffer with free-running 32-bit producer and
// consumer indexes (masked into the buffer, so they may wrap around 2^32 freely). When output
// overtakes the consumer, the oldest bytes are lost. XEN_SYSCTL_readconsole reads it with
// Xen 4.17's semantics (read_console_ring, xen/drivers/char/console.c):
//  - a read starts at the consumer, or with `incremental` at the caller's `index` when that
//    lies after the consumer and not beyond the producer;
//  - it returns up to `count` bytes and the index where it stopped, so the next incremental
//    read continues there;
//  - `clear` moves the consumer to where the read stopped (a full read empties the ring).
#pragma once
#include <stddef.h>
#include <stdint.h>

namespace console {
class ConsoleRing {
 public:
  // `size` must be a power of two; `start` is the initial index of both ends (0 in the
  // hypervisor: the tests start near 2^32 to check the indexes' wrap).
  constexpr ConsoleRing(char* storage, uint32_t size, uint32_t start = 0)
      : storage_(storage), size_(size), producer_(start), consumer_(start) {}

  void put(const char* text, size_t length);

  // A read as a plan: at most two contiguous pieces of the buffer (the second when the bytes
  // wrap around its end), to be copied out one after the other, and the index after them.
  struct Piece {
    const char* bytes = nullptr;
    uint32_t length = 0;
  };
  struct Read {
    Piece pieces[2];
    unsigned piece_count = 0;
    uint32_t total = 0;  // bytes in the pieces
    uint32_t end = 0;    // index after the last byte read
  };
  Read plan_read(bool incremental, uint32_t index, uint32_t count) const;
  // `clear` after a read that was copied out: the consumer moves to its end.
  void consume_to(uint32_t end);

  uint32_t size() const { return size_; }
  uint32_t producer() const { return producer_; }
  uint32_t consumer() const { return consumer_; }
  uint32_t unread() const { return producer_ - consumer_; }

 private:
  uint32_t offset(uint32_t index) const { return index & (size_ - 1); }
  uint32_t start_of_read(bool incremental, uint32_t index) const;

  char* storage_;
  uint32_t size_;
  uint32_t producer_, consumer_;
};
}  // namespace console
