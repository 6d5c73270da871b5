// Helpers for the relay unit tests: frames and payloads built the way the host library builds
// them, over the shared freestanding header.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "common/relay/protocol.h"

namespace relay_test {

inline std::vector<uint8_t> frame_bytes(uint8_t type, const std::vector<uint8_t>& payload, uint16_t channel = 0) {
  std::vector<uint8_t> out(relay::frame::kHeaderBytes);
  relay::frame::encode_header(out.data(), type, channel, payload.data(), uint32_t(payload.size()));
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

// Little-endian fields: {value, bytes} pairs.
struct Field {
  uint64_t value;
  unsigned bytes;
};
inline std::vector<uint8_t> fields(std::initializer_list<Field> list) {
  std::vector<uint8_t> out;
  for (const Field& f : list)
    for (unsigned i = 0; i < f.bytes; ++i) out.push_back(uint8_t(f.value >> (8 * i)));
  return out;
}
inline Field u32(uint64_t v) { return {v, 4}; }
inline Field u64(uint64_t v) { return {v, 8}; }

}  // namespace relay_test
