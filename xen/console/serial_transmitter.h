// Pure: the order and pace in which console bytes reach a UART, over any `Uart` with
// `bool ready()` (its transmit FIFO is empty) and `void write(char)`, so the host tests drive it
// with a UART that is slow as the real line is. A byte goes straight to the UART only when
// nothing waits before it and the UART is ready; otherwise it joins the transmit ring. Each
// poll() that finds the UART ready moves at most a FIFO's worth (16 bytes) from the ring, so no
// caller spends more than that; flush() polls until the ring is empty.
#pragma once
#include "console/serial_tx_ring.h"

namespace console {
template <class Uart>
class SerialTransmitter {
 public:
  static constexpr unsigned fifo_depth = 16;  // the 16550's transmit FIFO

  constexpr SerialTransmitter(Uart& uart, char* storage, uint32_t size) : uart_(uart), ring_(storage, size) {}

  // A byte that must not be lost: if the ring is full it waits (polls) for room.
  void put(char c) {
    poll();  // what waits goes first
    if (ring_.empty() && uart_.ready()) {
      uart_.write(c);
      return;
    }
    while (!ring_.push(c)) poll();
  }
  bool has_room(size_t bytes) const { return bytes <= ring_.room(); }
  void poll() {
    if (ring_.empty() || !uart_.ready()) return;
    for (unsigned i = 0; i < fifo_depth && !ring_.empty(); ++i) uart_.write(ring_.pop());
  }
  void flush() {
    while (!ring_.empty()) poll();
  }
  bool pending() const { return !ring_.empty(); }

 private:
  Uart& uart_;
  SerialTxRing ring_;
};
}  // namespace console
