// Writes records as 32-bit words: the hypervisor's ring and the host tools share this.
// Freestanding (no libc): plain word loops instead of memcpy.
#pragma once
#include "trace/format/record_header.h"

namespace trace {

// A record to be written: event id, optional TSC, up to seven extra words.
struct RecordFields {
  uint32_t event = 0;
  bool has_tsc = false;
  uint64_t tsc = 0;
  unsigned extra_count = 0;
  uint32_t extra[kMaxExtraWords] = {};

  constexpr size_t size_bytes() const { return record_bytes(extra_count, has_tsc); }
};

// Encodes `r` into `out` (at least r.size_bytes()/4 words). Returns the words written,
// or 0 when the record is malformed (too many extra words).
constexpr size_t encode_record(const RecordFields& r, uint32_t* out) {
  if (r.extra_count > kMaxExtraWords) return 0;
  size_t w = 0;
  out[w++] = RecordHeader::make(r.event, r.extra_count, r.has_tsc).raw();
  if (r.has_tsc) {
    out[w++] = uint32_t(r.tsc);
    out[w++] = uint32_t(r.tsc >> 32);
  }
  for (unsigned i = 0; i < r.extra_count; ++i) out[w++] = r.extra[i];
  return w;
}

// Builders for the records with a fixed meaning. Each returns a filled RecordFields.
constexpr RecordFields make_record(uint32_t event, uint64_t tsc, const uint32_t* extra, unsigned count) {
  RecordFields r;
  r.event = event;
  r.has_tsc = true;
  r.tsc = tsc;
  r.extra_count = count > kMaxExtraWords ? kMaxExtraWords : count;
  for (unsigned i = 0; i < r.extra_count; ++i) r.extra[i] = extra[i];
  return r;
}

}  // namespace trace
