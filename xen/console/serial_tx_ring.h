// Pure: the bytes waiting for the serial line, as Xen's serial transmit buffer (serial_txbuf,
// 16 KiB by default): writers append, and the UART is fed from the front whenever it has room
// (console/serial). Free-running 32-bit indexes masked into a power-of-two buffer; a full ring
// takes nothing (the caller decides whether to wait or to drop).
#pragma once
#include <stddef.h>
#include <stdint.h>

namespace console {
class SerialTxRing {
 public:
  // `size` must be a power of two.
  constexpr SerialTxRing(char* storage, uint32_t size) : storage_(storage), size_(size) {}

  bool push(char c) {
    if (full()) return false;
    storage_[producer_++ & (size_ - 1)] = c;
    return true;
  }
  // The oldest byte; the ring must not be empty.
  char pop() { return storage_[consumer_++ & (size_ - 1)]; }

  bool empty() const { return producer_ == consumer_; }
  bool full() const { return used() == size_; }
  uint32_t used() const { return producer_ - consumer_; }
  uint32_t room() const { return size_ - used(); }

 private:
  char* storage_;
  uint32_t size_;
  uint32_t producer_ = 0, consumer_ = 0;
};
}  // namespace console
