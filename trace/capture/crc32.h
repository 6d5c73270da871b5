// CRC-32 (IEEE 802.3, the one zlib and Python's zlib.crc32 compute), for stream frames.
#pragma once
#include <cstddef>
#include <cstdint>

namespace trace {

uint32_t crc32_update(uint32_t crc, const uint8_t* data, size_t size);
inline uint32_t crc32(const uint8_t* data, size_t size) { return crc32_update(0, data, size); }

}  // namespace trace
