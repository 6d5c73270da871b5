#include "common/relay/frame_receiver.h"

namespace relay {
namespace {
uint32_t get32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}
}  // namespace

FrameReceiver::FrameReceiver(uint8_t* storage, size_t capacity, uint32_t max_payload, uint64_t stall_limit)
    : storage_(storage), capacity_(capacity), max_payload_(max_payload), stall_limit_(stall_limit) {
  // A frame this end accepts must fit whole, or it could never complete.
  if (capacity_ < frame::kHeaderBytes + max_payload_) max_payload_ = uint32_t(capacity_ - frame::kHeaderBytes);
}

size_t FrameReceiver::push(const uint8_t* data, size_t size, uint64_t now) {
  if (capacity_ - end_ < size && start_ > 0) {
    size_t held = available();
    __builtin_memmove(storage_, storage_ + start_, held);
    start_ = 0;
    end_ = held;
  }
  size_t room = capacity_ - end_;
  size_t taken = size < room ? size : room;
  __builtin_memcpy(storage_ + end_, data, taken);
  end_ += taken;
  if (taken) last_byte_ = now;
  return taken;
}

bool FrameReceiver::magic_prefix_matches() const {
  size_t n = available() < 4 ? available() : 4;
  for (size_t i = 0; i < n; ++i)
    if (front()[i] != uint8_t(frame::kMagic >> (8 * i))) return false;
  return true;
}

void FrameReceiver::skip(size_t bytes) {
  for (size_t i = 0; i < bytes; ++i, ++consumed_)
    if (consumed_ >= quiet_until_) {
      ++pending_skipped_;
      ++skipped_total_;
    }
  start_ += bytes;
  if (start_ == end_) start_ = end_ = 0;
}

Received FrameReceiver::error(Error code, uint64_t detail, bool with_header) {
  Received r;
  r.kind = Received::Kind::error;
  r.error = code;
  r.detail = detail;
  if (with_header) {
    r.type = front()[5];
    r.channel = uint16_t(front()[6] | front()[7] << 8);
  }
  return r;
}

Received FrameReceiver::report_skipped() {
  Received r = error(Error::skipped, pending_skipped_, false);
  pending_skipped_ = 0;
  return r;
}

Received FrameReceiver::take_frame(uint32_t length) {
  Received r;
  r.kind = Received::Kind::frame;
  r.type = front()[5];
  r.channel = uint16_t(front()[6] | front()[7] << 8);
  r.payload = front() + frame::kHeaderBytes;
  r.length = length;
  // Consumed now; the payload stays in place until the next push() or next().
  consumed_ += frame::kHeaderBytes + length;
  start_ += frame::kHeaderBytes + length;
  ++frames_;
  return r;
}

Received FrameReceiver::next(uint64_t now) {
  if (start_ == end_) start_ = end_ = 0;  // the last frame handed out is no longer needed
  for (;;) {
    if (available() == 0 || (available() < 4 && magic_prefix_matches())) {
      // Nothing that could be a frame yet. A run of garbage is reported once input pauses
      // (with the start of a magic it may end in, when nothing more came).
      if (!stalled(now)) return {};
      if (available()) skip(available());
      if (pending_skipped_) return report_skipped();
      return {};
    }
    if (!magic_prefix_matches()) {
      skip(1);
      continue;
    }
    if (available() < frame::kHeaderBytes) {
      if (!stalled(now)) return {};
      quiet_until(available());
      Received r = error(Error::truncated, available(), false);
      skip(1);
      return r;
    }
    const uint8_t* h = front();
    uint32_t length = get32(h + 8);
    if (h[4] != frame::kVersion || length > frame::kMaxPayload) {
      skip(1);  // not a header after all
      continue;
    }
    if (length > max_payload_) {
      if (pending_skipped_) return report_skipped();
      Received r = error(Error::oversized, length, true);
      quiet_until(frame::kHeaderBytes + size_t(length));
      skip(frame::kHeaderBytes);
      return r;
    }
    if (available() < frame::kHeaderBytes + length) {
      if (!stalled(now)) return {};
      if (pending_skipped_) return report_skipped();
      Received r = error(Error::truncated, available(), true);
      quiet_until(available());
      skip(1);
      return r;
    }
    uint32_t crc = frame::crc32_update(frame::crc32_update(0, h, 12), h + frame::kHeaderBytes, length);
    if (crc != get32(h + 12)) {
      if (pending_skipped_) return report_skipped();
      Received r = error(Error::corrupt, length, true);
      quiet_until(frame::kHeaderBytes + size_t(length));
      skip(1);
      return r;
    }
    if (pending_skipped_) return report_skipped();
    return take_frame(length);
  }
}

}  // namespace relay
