#pragma once
// The relay's bulk window (tools/PROTOCOL.md "The bulk window"): a memory region the host and
// dom0 both see (QEMU's ivshmem-plain over a memory-backend-file the host maps; dom0 maps the
// device's BAR 2), carrying the same frames as the serial link in two byte rings, so a frame
// costs memory copies instead of a trapped port access per 14 bytes. Freestanding and pure:
// the layout and the ring arithmetic, used by the dom0 relay and by the library.
#include <stddef.h>
#include <stdint.h>

namespace relay::window {

constexpr uint32_t kMagic = 0x57525650;  // "PVRW"
constexpr uint32_t kVersion = 1;
// The backend's size (ivshmem wants a power of two): the header page, then the two rings.
constexpr uint64_t kBytes = 1u << 20;
constexpr uint32_t kRingBytes = 256 * 1024;  // each direction: a power of two
constexpr uint32_t kToDom0Offset = 0x1000;
constexpr uint32_t kToHostOffset = kToDom0Offset + kRingBytes;
static_assert(kToHostOffset + kRingBytes <= kBytes);
static_assert((kRingBytes & (kRingBytes - 1)) == 0);

// The PCI identity of QEMU's ivshmem-plain and the BAR that holds the shared memory.
constexpr uint16_t kPciVendor = 0x1af4, kPciDevice = 0x1110;
constexpr unsigned kSharedBar = 2;

enum State : uint32_t { absent = 0, serving = 1 };

// One direction: free-running byte counts. The producer writes only `head`, the consumer only
// `tail`; each on its own cache line.
struct RingIndex {
  uint32_t head;
  uint32_t pad0[15];
  uint32_t tail;
  uint32_t pad1[15];
};

// The window's first page. dom0 fills it when its relay starts (rings empty, then state).
struct Header {
  uint32_t magic;
  uint32_t version;
  uint32_t state;       // State: serving once dom0's relay polls the rings
  uint32_t ring_bytes;  // kRingBytes
  uint32_t to_dom0_offset;
  uint32_t to_host_offset;
  uint32_t pad[10];
  RingIndex to_dom0;  // at 64
  RingIndex to_host;  // at 192
};
static_assert(sizeof(Header) <= kToDom0Offset);

inline uint32_t load_acquire(const uint32_t& v) { return __atomic_load_n(&v, __ATOMIC_ACQUIRE); }
inline void store_release(uint32_t& v, uint32_t value) { __atomic_store_n(&v, value, __ATOMIC_RELEASE); }

// Bytes waiting in a ring, or more than `size` when the other side wrote a head that cannot be
// (a hostile or confused peer): callers treat that as a broken ring.
inline uint32_t used(uint32_t head, uint32_t tail) { return head - tail; }

// `n` bytes (at most the ring's `size`, a power of two) in or out of the ring at stream
// position `at`: a copy to the ring's end and, when it wraps, one from its start. Nothing at all
// for n = 0: dom0's relay polls an empty ring between requests, and that costs no call.
inline void copy_into_ring(uint8_t* ring, uint32_t size, uint32_t at, const uint8_t* data, size_t n) {
  const uint32_t start = at & (size - 1);
  const size_t first = n < size - start ? n : size - start;
  if (first) __builtin_memcpy(ring + start, data, first);
  if (n > first) __builtin_memcpy(ring, data + first, n - first);
}
inline void copy_out_of_ring(const uint8_t* ring, uint32_t size, uint32_t at, uint8_t* out, size_t n) {
  const uint32_t start = at & (size - 1);
  const size_t first = n < size - start ? n : size - start;
  if (first) __builtin_memcpy(out, ring + start, first);
  if (n > first) __builtin_memcpy(out + first, ring, n - first);
}

// Writes as much of `data` as fits; returns the bytes written.
inline size_t ring_write(RingIndex& index, uint8_t* ring, uint32_t size, const uint8_t* data, size_t length) {
  uint32_t head = index.head;  // ours
  uint32_t tail = load_acquire(index.tail);
  uint32_t filled = used(head, tail);
  if (filled > size) return 0;
  size_t room = size - filled;
  size_t n = length < room ? length : room;
  copy_into_ring(ring, size, head, data, n);
  store_release(index.head, uint32_t(head + n));
  return n;
}

// Reads at most `capacity` bytes. A head more than a ring ahead of our tail is no ring
// contents: everything is dropped (the tail jumps to the head) and `broken` says so.
inline size_t ring_read(RingIndex& index, const uint8_t* ring, uint32_t size, uint8_t* out, size_t capacity,
                        bool& broken) {
  uint32_t tail = index.tail;  // ours
  uint32_t head = load_acquire(index.head);
  uint32_t filled = used(head, tail);
  broken = filled > size;
  if (broken) {
    store_release(index.tail, head);
    return 0;
  }
  size_t n = filled < capacity ? filled : capacity;
  copy_out_of_ring(ring, size, tail, out, n);
  store_release(index.tail, uint32_t(tail + n));
  return n;
}

// Drops whatever waits in a ring (a new client ignores what an earlier one left unread).
inline void ring_discard(RingIndex& index) { store_release(index.tail, load_acquire(index.head)); }

}  // namespace relay::window
