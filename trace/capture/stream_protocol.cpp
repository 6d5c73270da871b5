#include "trace/capture/stream_protocol.h"

#include <cstring>

#include "trace/capture/crc32.h"

namespace trace::stream {
namespace {

void put32(std::vector<uint8_t>& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(uint8_t(v >> (8 * i)));
}

uint32_t get32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

}  // namespace

std::vector<uint8_t> Hello::encode() const {
  std::vector<uint8_t> out;
  put32(out, protocol);
  put32(out, cpus);
  put32(out, uint32_t(tsc_hz));
  put32(out, uint32_t(tsc_hz >> 32));
  put32(out, flags);
  return out;
}

bool Hello::decode(const std::vector<uint8_t>& payload, Hello& out) {
  if (payload.size() < 20) return false;
  const uint8_t* p = payload.data();
  out.protocol = get32(p);
  out.cpus = get32(p + 4);
  out.tsc_hz = uint64_t(get32(p + 8)) | uint64_t(get32(p + 12)) << 32;
  out.flags = get32(p + 16);
  return true;
}

std::vector<uint8_t> encode_frame(uint8_t type, uint16_t channel, const uint8_t* payload, size_t size) {
  std::vector<uint8_t> out;
  put32(out, kMagic);
  out.push_back(kVersion);
  out.push_back(type);
  out.push_back(uint8_t(channel));
  out.push_back(uint8_t(channel >> 8));
  put32(out, uint32_t(size));
  uint32_t crc = crc32_update(crc32(out.data(), 12), payload, size);
  put32(out, crc);
  out.insert(out.end(), payload, payload + size);
  return out;
}

void Decoder::feed(const uint8_t* data, size_t size) {
  buffer_.insert(buffer_.end(), data, data + size);
  while (try_frame()) {
  }
  compact();
}

void Decoder::finish() {
  while (try_frame()) {
  }
  if (available()) on_error_(consumed_, "stream ends inside a frame (" + std::to_string(available()) + " bytes left)");
  consumed_ += available();
  buffer_.clear();
  start_ = 0;
}

// Drops consumed bytes from the front once they are a good share of the buffer, so skipping
// garbage byte by byte stays linear.
void Decoder::compact() {
  if (start_ == 0 || start_ < buffer_.size() / 2) return;
  buffer_.erase(buffer_.begin(), buffer_.begin() + long(start_));
  start_ = 0;
}

void Decoder::skip_byte(const std::string& why) {
  if (!resyncing_) on_error_(consumed_, why + "; resynchronising");
  resyncing_ = true;
  start_++;
  consumed_++;
  skipped_++;
}

// Decodes one frame from the front of the buffer if it is complete. Returns true when it made
// progress (a frame or a skipped byte) and may be called again.
bool Decoder::try_frame() {
  if (available() < kHeaderBytes) return false;
  const uint8_t* h = buffer_.data() + start_;
  if (get32(h) != kMagic) {
    skip_byte("bad frame magic");
    return true;
  }
  if (h[4] != kVersion) {
    skip_byte("unsupported protocol version " + std::to_string(h[4]));
    return true;
  }
  uint32_t length = get32(h + 8);
  if (length > kMaxPayload) {
    skip_byte("frame length " + std::to_string(length) + " over the limit");
    return true;
  }
  if (available() < kHeaderBytes + length) return false;
  uint32_t crc = crc32_update(crc32(h, 12), h + kHeaderBytes, length);
  if (crc != get32(h + 12)) {
    skip_byte("frame CRC mismatch");
    return true;
  }
  Frame frame;
  frame.type = h[5];
  frame.channel = uint16_t(h[6] | h[7] << 8);
  frame.payload.assign(h + kHeaderBytes, h + kHeaderBytes + length);
  start_ += kHeaderBytes + length;
  consumed_ += kHeaderBytes + length;
  frames_++;
  resyncing_ = false;
  on_frame_(frame);
  return true;
}

}  // namespace trace::stream
