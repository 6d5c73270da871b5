// The frame header of the live-capture stream (trace/PROTOCOL.md), freestanding, so the
// streamer in the guest kernel and the host's decoder share one definition of the layout
// and of the CRC-32 that guards it.
#pragma once
#include <stddef.h>
#include <stdint.h>

namespace trace::stream_frame {
constexpr uint32_t kMagic = 0x52545650;  // "PVTR" as little-endian bytes
constexpr uint8_t kVersion = 1;
constexpr size_t kHeaderBytes = 16;
constexpr uint32_t kMaxPayload = 1u << 20;
enum Type : uint8_t { hello = 0x01, records = 0x02, lost = 0x03, end = 0x04 };

// CRC-32 (IEEE 802.3, as zlib), a byte at a time through a table the compiler computes (read-only
// data, nothing to set up at run time). Bit by bit it was some 80 instructions a byte, most of
// what dom0's relay spent on a frame: a page written through the relay is checked and its
// answer guarded, and `xl create` writes hundreds of pages.
struct Crc32Table {
  uint32_t entries[256];
};
constexpr Crc32Table make_crc32_table() {
  Crc32Table table{};
  for (uint32_t byte = 0; byte < 256; ++byte) {
    uint32_t crc = byte;
    for (int bit = 0; bit < 8; ++bit) crc = (crc & 1) ? 0xedb88320u ^ (crc >> 1) : crc >> 1;
    table.entries[byte] = crc;
  }
  return table;
}
inline constexpr Crc32Table kCrc32Table = make_crc32_table();

constexpr uint32_t crc32_update(uint32_t crc, const uint8_t* data, size_t size) {
  crc = ~crc;
  for (size_t i = 0; i < size; ++i) crc = kCrc32Table.entries[(crc ^ data[i]) & 0xff] ^ (crc >> 8);
  return ~crc;
}

constexpr void put_le(uint8_t* out, uint64_t value, unsigned bytes) {
  for (unsigned i = 0; i < bytes; ++i) out[i] = uint8_t(value >> (8 * i));
}

// Fills the 16-byte header for `payload`; the CRC covers header bytes 0..11 and the payload.
constexpr void encode_header(uint8_t* header, uint8_t type, uint16_t channel, const uint8_t* payload,
                             uint32_t length) {
  put_le(header, kMagic, 4);
  header[4] = kVersion;
  header[5] = type;
  put_le(header + 6, channel, 2);
  put_le(header + 8, length, 4);
  uint32_t crc = crc32_update(crc32_update(0, header, 12), payload, length);
  put_le(header + 12, crc, 4);
}
}  // namespace trace::stream_frame
