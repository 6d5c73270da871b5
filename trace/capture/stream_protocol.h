// The framing protocol between the hypervisor's dom0 trace streamer and the host's xentrace
// (trace/PROTOCOL.md): typed, length-prefixed frames with a version and a CRC-32, so control
// messages of the toolstack can share the link later.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/stream/stream_frame.h"

namespace trace::stream {

// The layout constants are the freestanding ones the guest's streamer uses.
constexpr uint32_t kMagic = stream_frame::kMagic;
constexpr uint8_t kVersion = stream_frame::kVersion;
constexpr size_t kHeaderBytes = stream_frame::kHeaderBytes;
constexpr uint32_t kMaxPayload = stream_frame::kMaxPayload;

enum class FrameType : uint8_t {
  hello = 0x01,    // producer parameters; first frame
  records = 0x02,  // raw t_rec bytes of one CPU (channel = cpu)
  lost = 0x03,     // the streamer dropped bytes it could not send
  end = 0x04,      // clean end of stream
                   // 0x05..0x7f: reserved for trace extensions (skipped); 0x80..0xff: control (toolstack).
};

constexpr bool is_control(uint8_t type) { return type >= 0x80; }

struct Frame {
  uint8_t type = 0;
  uint16_t channel = 0;
  std::vector<uint8_t> payload;
};

struct Hello {
  uint32_t protocol = kVersion;
  uint32_t cpus = 0;
  uint64_t tsc_hz = 0;
  uint32_t flags = 0;

  std::vector<uint8_t> encode() const;
  static bool decode(const std::vector<uint8_t>& payload, Hello& out);
};

// Serialises one frame (header + payload) with its CRC.
std::vector<uint8_t> encode_frame(uint8_t type, uint16_t channel, const uint8_t* payload, size_t size);

// Incremental decoder: feed bytes as they arrive; whole frames come out through `on_frame`.
// Garbage (bad magic, version, length or CRC) is skipped byte by byte until the next valid
// header and reported through `on_error`. Buffers at most one frame.
class Decoder {
 public:
  using FrameHandler = std::function<void(const Frame&)>;
  using ErrorHandler = std::function<void(uint64_t stream_offset, const std::string&)>;

  Decoder(FrameHandler on_frame, ErrorHandler on_error)
      : on_frame_(std::move(on_frame)), on_error_(std::move(on_error)) {}

  void feed(const uint8_t* data, size_t size);
  // Call at end of input: reports a partial frame left in the buffer.
  void finish();

  uint64_t frames() const { return frames_; }
  uint64_t skipped_bytes() const { return skipped_; }

 private:
  bool try_frame();
  void skip_byte(const std::string& why);
  void compact();
  size_t available() const { return buffer_.size() - start_; }

  FrameHandler on_frame_;
  ErrorHandler on_error_;
  std::vector<uint8_t> buffer_;
  size_t start_ = 0;       // first unconsumed byte of buffer_
  uint64_t consumed_ = 0;  // stream offset of buffer_[0]
  uint64_t frames_ = 0, skipped_ = 0;
  bool resyncing_ = false;
};

}  // namespace trace::stream
