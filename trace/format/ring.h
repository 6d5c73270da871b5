// A per-CPU trace ring over a caller-provided struct t_buf and data area, with Xen's index
// discipline: prod and cons run modulo 2*size (so "full" and "empty" differ without a spare
// slot, and the arithmetic never overflows 32 bits for sizes that are not powers of two).
// Records are contiguous in the data area: a record that would cross the end is preceded by
// a TRC_TRACE_WRAP_BUFFER padding record. When the ring is full, records are counted as lost
// and a TRC_LOST_RECORDS record is written before the next record that fits.
// Single producer (the CPU that owns the ring) and single consumer (dom0 / the host).
// Freestanding: no libc; atomics are compiler builtins.
#pragma once
#include "trace/format/framing.h"

namespace trace {

class TraceRing {
 public:
  // Who was running when records were lost; stored in the TRC_LOST_RECORDS record.
  struct Context {
    uint16_t domain = 0;
    uint16_t vcpu = 0;
  };

  // `data_bytes` must be a non-zero multiple of 4 and large enough for a lost-records marker
  // plus the largest record (64 bytes); smaller rings are rejected (valid() is false).
  TraceRing(t_buf* header, void* data, uint32_t data_bytes)
      : header_(header), data_(static_cast<uint8_t*>(data)), size_(data_bytes) {}

  static constexpr uint32_t kMinimumBytes = LostRecords::kBytes + kMaxRecordBytes;

  bool valid() const { return size_ >= kMinimumBytes && size_ % 4 == 0 && size_ < (1u << 30); }
  uint32_t size() const { return size_; }
  void reset() {
    store_release(&header_->cons, 0);
    store_release(&header_->prod, 0);
    lost_ = 0;
    corrupt_ = false;
  }

  // ---- producer ----

  // Space for a record of `bytes` (a multiple of 4, at most sizeof(t_rec)), or nullptr when
  // the ring is full (the record is then counted as lost). `now` timestamps the lost-records
  // marker if one is due. Must be followed by commit(bytes) before the next reserve.
  uint32_t* reserve(uint32_t bytes, uint64_t now, Context context) {
    if (!valid() || bytes < 4 || bytes % 4 || bytes > kMaxRecordBytes) return nullptr;
    uint32_t prod = load_relaxed(&header_->prod);
    uint32_t cons = load_acquire(&header_->cons);
    if (bogus(prod) || bogus(cons)) {
      corrupt_ = true;  // the consumer wrote garbage: stop producing, like Xen
      return nullptr;
    }
    if (needed_bytes(prod, bytes) > size_ - distance(prod, cons)) {
      count_lost(now, context);
      return nullptr;
    }
    if (lost_) {
      prod = place(prod, LostRecords::kBytes);
      LostRecords marker{lost_, lost_context_.domain, lost_context_.vcpu, lost_first_tsc_};
      prod = append(prod, marker.fields(now));
      lost_ = 0;
    }
    reserved_at_ = place(prod, bytes);
    // Padding and the marker become visible together with the record, at commit.
    return reinterpret_cast<uint32_t*>(data_ + offset(reserved_at_));
  }

  void commit(uint32_t bytes) { store_release(&header_->prod, advance(reserved_at_, bytes)); }

  // reserve + encode + commit. Returns false when the record was lost or malformed.
  bool write(const RecordFields& record, Context context) {
    uint32_t bytes = uint32_t(record.size_bytes());
    uint32_t* slot = reserve(bytes, record.tsc, context);
    if (!slot || encode_record(record, slot) == 0) return false;
    commit(bytes);
    return true;
  }

  uint32_t lost() const { return lost_; }
  bool corrupt() const { return corrupt_; }

  // ---- consumer ----

  uint32_t unconsumed_bytes() const {
    uint32_t prod = load_acquire(&header_->prod), cons = load_relaxed(&header_->cons);
    return bogus(prod) || bogus(cons) ? 0 : distance(prod, cons);
  }

  // Copies whole records (raw, padding included, as xentrace copies them) into `out`, at most
  // `capacity` bytes, and releases them to the producer. Returns the bytes copied. With
  // `until`, stops before the first record stamped later than it (a reader of several CPUs'
  // rings interleaves their windows in time that way, see next_tsc).
  uint32_t copy_out(uint8_t* out, uint32_t capacity, uint64_t until = ~uint64_t(0)) {
    uint32_t prod = load_acquire(&header_->prod), cons = load_relaxed(&header_->cons);
    if (bogus(prod) || bogus(cons)) return 0;
    uint32_t copied = 0;
    while (cons != prod) {
      uint32_t bytes = record_size_at(cons, distance(prod, cons));
      if (bytes == 0 || copied + bytes > capacity) break;
      uint64_t tsc;
      if (stamp_at(cons, tsc) && tsc > until) break;
      copy_bytes(out + copied, data_ + offset(cons), bytes);
      copied += bytes;
      cons = advance(cons, bytes);
    }
    store_release(&header_->cons, cons);
    return copied;
  }

  // The TSC of the oldest unconsumed record that has one (wrap padding skipped); false when
  // there is none, or the ring is inconsistent. Nothing is released.
  bool next_tsc(uint64_t& tsc) {
    uint32_t prod = load_acquire(&header_->prod), cons = load_relaxed(&header_->cons);
    if (bogus(prod) || bogus(cons)) return false;
    while (cons != prod) {
      uint32_t bytes = record_size_at(cons, distance(prod, cons));
      if (bytes == 0) return false;
      if (stamp_at(cons, tsc)) return true;
      cons = advance(cons, bytes);
    }
    return false;
  }

  // The next record in order (padding skipped), released to the producer. False when empty
  // or when the ring's contents are inconsistent (then corrupt() is true).
  bool pop(RecordFields& out) {
    for (;;) {
      uint32_t prod = load_acquire(&header_->prod), cons = load_relaxed(&header_->cons);
      if (bogus(prod) || bogus(cons) || cons == prod) return false;
      uint32_t bytes = record_size_at(cons, distance(prod, cons));
      if (bytes == 0) return false;
      const uint32_t* words = reinterpret_cast<const uint32_t*>(data_ + offset(cons));
      decode(words, out);
      store_release(&header_->cons, advance(cons, bytes));
      if (out.event != events::kWrapBuffer) return true;
    }
  }

 private:
  bool bogus(uint32_t index) const { return (index & 3) != 0 || index >= 2 * size_; }
  uint32_t offset(uint32_t index) const { return index >= size_ ? index - size_ : index; }
  uint32_t distance(uint32_t prod, uint32_t cons) const { return prod >= cons ? prod - cons : prod + 2 * size_ - cons; }
  uint32_t advance(uint32_t index, uint32_t bytes) const {
    uint32_t next = index + bytes;
    return next >= 2 * size_ ? next - 2 * size_ : next;
  }
  uint32_t bytes_to_wrap(uint32_t index) const { return size_ - offset(index); }

  // Bytes a record needs at `prod`, counting the pending lost marker and any padding.
  uint32_t needed_bytes(uint32_t prod, uint32_t bytes) const {
    uint32_t to_wrap = bytes_to_wrap(prod), total = 0;
    if (lost_) {
      if (LostRecords::kBytes > to_wrap) {
        total += to_wrap;
        to_wrap = size_;
      }
      total += LostRecords::kBytes;
      to_wrap -= LostRecords::kBytes;
      if (to_wrap == 0) to_wrap = size_;
    }
    if (bytes > to_wrap) total += to_wrap;
    return total + bytes;
  }

  // Pads to the wrap point if `bytes` would not fit before it; returns the index to write at.
  uint32_t place(uint32_t prod, uint32_t bytes) {
    uint32_t to_wrap = bytes_to_wrap(prod);
    return bytes > to_wrap ? append(prod, wrap_padding(to_wrap)) : prod;
  }

  uint32_t append(uint32_t prod, const RecordFields& record) {
    encode_record(record, reinterpret_cast<uint32_t*>(data_ + offset(prod)));
    return advance(prod, uint32_t(record.size_bytes()));
  }

  void count_lost(uint64_t now, Context context) {
    if (lost_++ == 0) {
      lost_first_tsc_ = now;
      lost_context_ = context;
    }
  }

  // Size of the record at `cons`, or 0 (and corrupt) if it overruns what was produced or
  // the wrap point: a consumer must never read past either.
  uint32_t record_size_at(uint32_t cons, uint32_t available) {
    const uint32_t* words = reinterpret_cast<const uint32_t*>(data_ + offset(cons));
    uint32_t bytes = uint32_t(RecordHeader(words[0]).size_bytes());
    if (bytes > available || bytes > bytes_to_wrap(cons)) {
      corrupt_ = true;
      return 0;
    }
    return bytes;
  }

  // The TSC of the (whole, checked) record at `cons`, if it has one that means a time: wrap
  // padding may carry a TSC field only to fill space.
  bool stamp_at(uint32_t cons, uint64_t& tsc) const {
    const uint32_t* words = reinterpret_cast<const uint32_t*>(data_ + offset(cons));
    RecordHeader h(words[0]);
    if (!h.has_tsc() || h.event() == events::kWrapBuffer) return false;
    tsc = uint64_t(words[1]) | (uint64_t(words[2]) << 32);
    return true;
  }

  static void decode(const uint32_t* words, RecordFields& out) {
    RecordHeader h(words[0]);
    out.event = h.event();
    out.has_tsc = h.has_tsc();
    out.tsc = h.has_tsc() ? uint64_t(words[1]) | (uint64_t(words[2]) << 32) : 0;
    out.extra_count = h.extra_words();
    const uint32_t* extra = words + (h.has_tsc() ? 3 : 1);
    for (unsigned i = 0; i < out.extra_count; ++i) out.extra[i] = extra[i];
  }

  static void copy_bytes(uint8_t* to, const uint8_t* from, uint32_t n) {
    for (uint32_t i = 0; i < n; ++i) to[i] = from[i];
  }

  static uint32_t load_acquire(const uint32_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
  static uint32_t load_relaxed(const uint32_t* p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
  static void store_release(uint32_t* p, uint32_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }

  t_buf* header_;
  uint8_t* data_;
  uint32_t size_;
  uint32_t reserved_at_ = 0;
  uint32_t lost_ = 0;
  uint64_t lost_first_tsc_ = 0;
  Context lost_context_{};
  bool corrupt_ = false;
};

}  // namespace trace
