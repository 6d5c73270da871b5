// The header word of one xentrace record (struct t_rec in <xen/trace.h>): event id in the low
// 28 bits, number of extra 32-bit words in bits 28..30, TSC-present flag in bit 31.
// Freestanding: only <stdint.h>, <stddef.h> and the Xen public header.
#pragma once
#include <stdint.h>
#include <stddef.h>
#include <xen/trace.h>

namespace trace {

// The on-disk layout is Xen's struct t_rec; we read it through 32-bit words rather than its
// bitfields (bitfield order is compiler-defined), so check the layout once here.
static_assert(sizeof(t_rec) == 4 + 8 + 4 * TRACE_EXTRA_MAX, "t_rec layout");
static_assert(offsetof(t_rec, u.cycles.extra_u32) == 12, "t_rec: TSC then extra words");
static_assert(offsetof(t_rec, u.nocycles.extra_u32) == 4, "t_rec: extra words without TSC");

constexpr unsigned kMaxExtraWords = TRACE_EXTRA_MAX;
constexpr uint32_t kEventMask = 0x0fffffffu;  // what TRC_HD_TO_EVENT keeps
constexpr uint32_t kTscFlag = 1u << 31;       // TRC_HD_CYCLE_FLAG
constexpr size_t kMaxRecordBytes = sizeof(t_rec);

class RecordHeader {
 public:
  constexpr explicit RecordHeader(uint32_t word) : word_(word) {}

  static constexpr RecordHeader make(uint32_t event, unsigned extra_words, bool has_tsc) {
    return RecordHeader((event & kEventMask) | ((uint32_t(extra_words) & TRACE_EXTRA_MAX) << TRACE_EXTRA_SHIFT) |
                        (has_tsc ? kTscFlag : 0u));
  }

  constexpr uint32_t raw() const { return word_; }
  constexpr uint32_t event() const { return word_ & kEventMask; }
  constexpr unsigned extra_words() const { return (word_ >> TRACE_EXTRA_SHIFT) & TRACE_EXTRA_MAX; }
  constexpr bool has_tsc() const { return (word_ & kTscFlag) != 0; }
  constexpr size_t size_bytes() const { return 4 + (has_tsc() ? 8 : 0) + 4 * extra_words(); }
  constexpr size_t size_words() const { return size_bytes() / 4; }

 private:
  uint32_t word_;
};

constexpr size_t record_bytes(unsigned extra_words, bool has_tsc) {
  return RecordHeader::make(0, extra_words, has_tsc).size_bytes();
}

// Class, subclass and minor number of an event id, as <xen/trace.h> splits them.
constexpr uint32_t event_class(uint32_t event) { return (event >> TRC_CLS_SHIFT) & 0xfff; }
constexpr uint32_t event_subclass(uint32_t event) { return (event >> TRC_SUBCLS_SHIFT) & 0xf; }
constexpr uint32_t event_minor(uint32_t event) { return event & 0xfff; }

}  // namespace trace
