// The backend's half of a PV console ring (xencons_interface, xen/io/console.h): what the
// guest produced in `out` between the backend's consumer index and the guest's producer index.
// Both indexes are free-running 32-bit counters; the guest controls the producer (and could
// write anything into the page), so the reader trusts nothing but its own consumer index: a
// span longer than the ring is garbage and is skipped whole (nothing read, the consumer jumps
// to the producer), and every byte is read at index & (size - 1), inside the ring. Pure.
#pragma once
#include <stdint.h>

namespace console {
struct RingRead {
  uint32_t length = 0;        // bytes copied out
  uint32_t consumer = 0;      // the new consumer index, to publish in out_cons
  bool inconsistent = false;  // the producer was more than the ring ahead: nothing read
};

// Copies at most `capacity` bytes of [consumer, producer) from `ring` (`size` bytes, a power of
// two) to `to`. Call again while length == capacity to drain more.
RingRead read_guest_ring(const volatile char* ring, uint32_t size, uint32_t consumer, uint32_t producer, char* to,
                         uint32_t capacity);
}  // namespace console
