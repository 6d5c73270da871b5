// The records that frame a trace rather than describe the hypervisor: xentrace's per-CPU
// window header (TRC_TRACE_CPU_CHANGE), the hypervisor's ring padding (TRC_TRACE_WRAP_BUFFER)
// and the lost-records marker (TRC_LOST_RECORDS). Freestanding.
#pragma once
#include "trace/format/encoder.h"
#include "trace/format/events.h"

namespace trace {

// xentrace writes one of these before every window of raw ring bytes it copies out: no TSC,
// two extra words (cpu, number of bytes of records that follow).
struct CpuChange {
  uint32_t cpu = 0;
  uint32_t window_bytes = 0;

  static constexpr unsigned kExtraWords = 2;
  static constexpr size_t kBytes = 12;

  constexpr RecordFields fields() const {
    RecordFields r;
    r.event = events::kCpuChange;
    r.extra_count = kExtraWords;
    r.extra[0] = cpu;
    r.extra[1] = window_bytes;
    return r;
  }
};

// Emitted by the ring when space frees up after records were dropped: with TSC, four extra
// words (count; domain | vcpu << 16; TSC of the first dropped record, low then high).
struct LostRecords {
  uint32_t count = 0;
  uint16_t domain = 0;
  uint16_t vcpu = 0;
  uint64_t first_tsc = 0;

  static constexpr unsigned kExtraWords = 4;
  static constexpr size_t kBytes = 28;

  constexpr RecordFields fields(uint64_t now) const {
    RecordFields r;
    r.event = events::kLostRecords;
    r.has_tsc = true;
    r.tsc = now;
    r.extra_count = kExtraWords;
    r.extra[0] = count;
    r.extra[1] = uint32_t(domain) | (uint32_t(vcpu) << 16);
    r.extra[2] = uint32_t(first_tsc);
    r.extra[3] = uint32_t(first_tsc >> 32);
    return r;
  }

  static constexpr LostRecords from_extra(const uint32_t* extra) {
    LostRecords l;
    l.count = extra[0];
    l.domain = uint16_t(extra[1]);
    l.vcpu = uint16_t(extra[1] >> 16);
    l.first_tsc = uint64_t(extra[2]) | (uint64_t(extra[3]) << 32);
    return l;
  }
};

// Padding that fills the ring from a record that would not fit up to the wrap point. Any
// multiple of 4 from 4 to 36 bytes can be expressed: header + extra words, plus a TSC when
// seven extra words are not enough (as Xen does).
constexpr RecordFields wrap_padding(size_t bytes) {
  RecordFields r;
  r.event = events::kWrapBuffer;
  size_t extra = (bytes - 4) / 4;
  if (extra > kMaxExtraWords) {
    r.has_tsc = true;
    extra -= 2;
  }
  r.extra_count = unsigned(extra);
  return r;
}

}  // namespace trace
