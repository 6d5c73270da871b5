#include "console/console_ring.h"

namespace console {
void ConsoleRing::put(const char* text, size_t length) {
  for (size_t i = 0; i < length; ++i) storage_[offset(producer_++)] = text[i];
  if (producer_ - consumer_ > size_) consumer_ = producer_ - size_;  // the oldest bytes are gone
}

// Xen's test, written for indexes that may have wrapped: an index counts when it lies in
// (consumer, producer].
uint32_t ConsoleRing::start_of_read(bool incremental, uint32_t index) const {
  const uint32_t c = consumer_, p = producer_;
  bool inside = c <= p ? (c < index && index <= p) : (c < index || index <= p);
  return incremental && inside ? index : c;
}

ConsoleRing::Read ConsoleRing::plan_read(bool incremental, uint32_t index, uint32_t count) const {
  Read read;
  uint32_t at = start_of_read(incremental, index);
  while (at != producer_ && read.total < count && read.piece_count < 2) {
    uint32_t length = producer_ - at;
    if (offset(at) + length > size_) length = size_ - offset(at);  // up to the buffer's end
    if (read.total + length > count) length = count - read.total;
    read.pieces[read.piece_count++] = Piece{storage_ + offset(at), length};
    read.total += length;
    at += length;
  }
  read.end = at;
  return read;
}

void ConsoleRing::consume_to(uint32_t end) { consumer_ = producer_ - end > size_ ? producer_ - size_ : end; }
}  // namespace console
