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

// CRC-32 (IEEE 802.3, as zlib), eight bytes at a time through eight tables the compiler
// computes (read-only data, nothing to set up at run time; "slicing by 8"): table k gives the
// CRC of a byte followed by k zero bytes, so the eight bytes of a word are folded in at once.
// A byte at a time it was about 6 instructions a byte, bit by bit some 80: nearly all of what
// dom0's relay spends on a frame, since every page written through the relay is checked and its
// answer guarded, and `xl create` writes hundreds of pages.
struct Crc32Tables {
  uint32_t entries[8][256];
};
constexpr Crc32Tables make_crc32_tables() {
  Crc32Tables tables{};
  for (uint32_t byte = 0; byte < 256; ++byte) {
    uint32_t crc = byte;
    for (int bit = 0; bit < 8; ++bit) crc = (crc & 1) ? 0xedb88320u ^ (crc >> 1) : crc >> 1;
    tables.entries[0][byte] = crc;
  }
  for (unsigned k = 1; k < 8; ++k)
    for (uint32_t byte = 0; byte < 256; ++byte) {
      const uint32_t before = tables.entries[k - 1][byte];
      tables.entries[k][byte] = (before >> 8) ^ tables.entries[0][before & 0xff];
    }
  return tables;
}
inline constexpr Crc32Tables kCrc32Tables = make_crc32_tables();

constexpr uint32_t load_le32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

constexpr uint32_t crc32_update(uint32_t crc, const uint8_t* data, size_t size) {
  const auto& t = kCrc32Tables.entries;
  crc = ~crc;
  for (; size >= 8; data += 8, size -= 8) {
    const uint32_t low = load_le32(data) ^ crc, high = load_le32(data + 4);
    crc = t[7][low & 0xff] ^ t[6][(low >> 8) & 0xff] ^ t[5][(low >> 16) & 0xff] ^ t[4][low >> 24] ^ t[3][high & 0xff] ^
          t[2][(high >> 8) & 0xff] ^ t[1][(high >> 16) & 0xff] ^ t[0][high >> 24];
  }
  for (; size > 0; ++data, --size) crc = t[0][(crc ^ *data) & 0xff] ^ (crc >> 8);
  return ~crc;
}

constexpr void put_le(uint8_t* out, uint64_t value, unsigned bytes) {
  for (unsigned i = 0; i < bytes; ++i) out[i] = uint8_t(value >> (8 * i));
}

// Fills the 16-byte header for `payload`; the CRC covers header bytes 0..11 and the payload.
constexpr void encode_header(uint8_t* header, uint8_t type, uint16_t channel, const uint8_t* payload, uint32_t length) {
  put_le(header, kMagic, 4);
  header[4] = kVersion;
  header[5] = type;
  put_le(header + 6, channel, 2);
  put_le(header + 8, length, 4);
  uint32_t crc = crc32_update(crc32_update(0, header, 12), payload, length);
  put_le(header + 12, crc, 4);
}
}  // namespace trace::stream_frame
