#include "console/guest_ring_reader.h"

namespace console {
RingRead read_guest_ring(const volatile char* ring, uint32_t size, uint32_t consumer, uint32_t producer, char* to,
                         uint32_t capacity) {
  RingRead result;
  result.consumer = consumer;
  uint32_t available = producer - consumer;  // wraps as the indexes do
  if (available > size) {
    result.inconsistent = true;
    result.consumer = producer;
    return result;
  }
  uint32_t n = available < capacity ? available : capacity;
  for (uint32_t i = 0; i < n; ++i) to[i] = ring[(consumer + i) & (size - 1)];
  result.length = n;
  result.consumer = consumer + n;
  return result;
}
}  // namespace console
