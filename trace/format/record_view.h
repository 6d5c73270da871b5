// Read-only typed access to one record laid out as 32-bit words (header, optional TSC,
// extra words). The caller guarantees the words exist (see RecordView::fits).
#pragma once
#include "trace/format/record_header.h"

namespace trace {

class RecordView {
 public:
  constexpr explicit RecordView(const uint32_t* words) : words_(words) {}

  // Whether a record starting at `words` is complete within `available` words.
  static constexpr bool fits(const uint32_t* words, size_t available) {
    return available >= 1 && RecordHeader(words[0]).size_words() <= available;
  }

  constexpr RecordHeader header() const { return RecordHeader(words_[0]); }
  constexpr uint32_t event() const { return header().event(); }
  constexpr unsigned extra_count() const { return header().extra_words(); }
  constexpr bool has_tsc() const { return header().has_tsc(); }
  constexpr uint64_t tsc() const { return has_tsc() ? (uint64_t(words_[2]) << 32) | words_[1] : 0; }
  constexpr uint32_t extra(unsigned i) const { return extra_words()[i]; }
  constexpr uint64_t extra64(unsigned i) const { return uint64_t(extra(i)) | (uint64_t(extra(i + 1)) << 32); }
  constexpr const uint32_t* extra_words() const { return words_ + (has_tsc() ? 3 : 1); }
  constexpr size_t size_bytes() const { return header().size_bytes(); }

 private:
  const uint32_t* words_;
};

}  // namespace trace
