#pragma once
// A bounds-checked view of untrusted bytes (a kernel image, a multiboot structure, a note).
// Every read says whether it fitted, so parsers never index past what they were given and
// never perform unaligned or type-punned loads (the input may sit at any address).

#include <stddef.h>
#include <stdint.h>

namespace boot {

class ByteSpan {
 public:
  constexpr ByteSpan() = default;
  constexpr ByteSpan(const uint8_t* data, uint64_t size) : data_(data), size_(data ? size : 0) {}

  constexpr const uint8_t* data() const { return data_; }
  constexpr uint64_t size() const { return size_; }
  constexpr bool empty() const { return size_ == 0; }

  // True when [offset, offset + length) lies inside the span, without overflowing.
  constexpr bool contains(uint64_t offset, uint64_t length) const {
    return offset <= size_ && length <= size_ - offset;
  }

  // The sub-span [offset, offset + length), or an empty span if it does not fit.
  constexpr ByteSpan sub(uint64_t offset, uint64_t length) const {
    return contains(offset, length) ? ByteSpan(data_ + offset, length) : ByteSpan();
  }

  // Little-endian unsigned read of `width` (1, 2, 4 or 8) bytes; false if out of bounds.
  constexpr bool read_le(uint64_t offset, unsigned width, uint64_t& value) const {
    if (!contains(offset, width) || width == 0 || width > 8) return false;
    uint64_t result = 0;
    for (unsigned i = 0; i < width; ++i) result |= uint64_t(data_[offset + i]) << (8 * i);
    value = result;
    return true;
  }

  // Unchecked typed reads for offsets the caller has already validated.
  constexpr uint8_t u8(uint64_t offset) const { return data_[offset]; }
  constexpr uint16_t u16(uint64_t offset) const { return uint16_t(le(offset, 2)); }
  constexpr uint32_t u32(uint64_t offset) const { return uint32_t(le(offset, 4)); }
  constexpr uint64_t u64(uint64_t offset) const { return le(offset, 8); }

  // True when the span holds exactly the bytes of `text` followed by a NUL terminator.
  // Written as a loop: freestanding builds must not depend on a libc strlen/memcmp.
  constexpr bool equals_c_string(const char* text) const {
    uint64_t i = 0;
    for (; text[i] != 0; ++i)
      if (i >= size_ || data_[i] != uint8_t(text[i])) return false;
    return size_ == i + 1 && data_[i] == 0;
  }

  // Length of the NUL-terminated string at the start of the span, or -1 if no NUL inside.
  constexpr int64_t c_string_length() const {
    for (uint64_t i = 0; i < size_; ++i)
      if (data_[i] == 0) return int64_t(i);
    return -1;
  }

 private:
  constexpr uint64_t le(uint64_t offset, unsigned width) const {
    uint64_t result = 0;
    for (unsigned i = 0; i < width; ++i) result |= uint64_t(data_[offset + i]) << (8 * i);
    return result;
  }

  const uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
};

// Overflow-safe helpers shared by the boot parsers.
constexpr bool add_overflows(uint64_t a, uint64_t b) { return a + b < a; }
constexpr uint64_t round_up(uint64_t value, uint64_t alignment) { return (value + alignment - 1) & ~(alignment - 1); }
constexpr uint64_t round_down(uint64_t value, uint64_t alignment) { return value & ~(alignment - 1); }

}  // namespace boot
