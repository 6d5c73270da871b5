// Incremental receiver of the framed link (trace/PROTOCOL.md), freestanding, for the ends that
// must keep serving whatever arrives: the dom0 relay and the host library. Bytes are pushed as
// they come; next() hands out whole frames whose CRC holds, and says what was wrong with the
// bytes that were not one:
//   - a CRC mismatch is `corrupt`; the receiver then looks for a header again from the next
//     byte, in the bytes it still holds, so a frame that followed a damaged one is not lost;
//   - a frame whose payload is longer than this end takes is `oversized`, reported as soon as
//     its header is in (its payload is never buffered, and is skipped as it comes);
//   - a frame that stops arriving (no byte for `stall_limit`) is `truncated`;
//   - bytes before a header are `skipped`, reported once per run, before the frame that ends it.
// A receiver never stops: after any error it is ready for the next frame.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "common/relay/protocol.h"

namespace relay {

struct Received {
  enum class Kind { nothing, frame, error };
  Kind kind = Kind::nothing;
  uint8_t type = 0;  // frame: its type; error: the type in the header, if there was one
  uint16_t channel = 0;
  const uint8_t* payload = nullptr;  // frame: valid until the next push() or next()
  uint32_t length = 0;
  Error error = Error::corrupt;
  uint64_t detail = 0;
};

class FrameReceiver {
 public:
  // `storage` holds at least kHeaderBytes + max_payload bytes; `now` and `stall_limit` are in
  // one unit of the caller's choice (the relay uses nanoseconds of system time).
  FrameReceiver(uint8_t* storage, size_t capacity, uint32_t max_payload, uint64_t stall_limit);

  // Appends up to `size` bytes; returns how many it took (0 when full: call next()).
  size_t push(const uint8_t* data, size_t size, uint64_t now);
  Received next(uint64_t now);

  size_t space() const { return capacity_ - (end_ - start_); }
  bool holding() const { return end_ != start_; }  // bytes of a frame not complete yet
  uint64_t frames() const { return frames_; }
  uint64_t skipped_bytes() const { return skipped_total_; }

 private:
  size_t available() const { return end_ - start_; }
  const uint8_t* front() const { return storage_ + start_; }
  bool stalled(uint64_t now) const { return now - last_byte_ >= stall_limit_; }
  bool magic_prefix_matches() const;
  void skip(size_t bytes);
  void quiet_until(size_t bytes_from_front) { quiet_until_ = consumed_ + bytes_from_front; }
  Received error(Error code, uint64_t detail, bool with_header);
  Received take_frame(uint32_t length);
  Received report_skipped();

  uint8_t* storage_;
  size_t capacity_;
  uint32_t max_payload_;
  uint64_t stall_limit_;
  size_t start_ = 0, end_ = 0;
  uint64_t consumed_ = 0;     // stream offset of storage_[start_]
  uint64_t quiet_until_ = 0;  // bytes before this offset belong to a frame already reported
  uint64_t last_byte_ = 0;
  uint64_t pending_skipped_ = 0;
  uint64_t skipped_total_ = 0;
  uint64_t frames_ = 0;
};

}  // namespace relay
