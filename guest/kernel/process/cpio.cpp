#include "cpio.h"

namespace lib {
namespace {

constexpr size_t kHeaderSize = 110;
constexpr size_t kFieldCount = 13;
enum Field {
  kIno,
  kMode,
  kUid,
  kGid,
  kNlink,
  kMtime,
  kFileSize,
  kDevMajor,
  kDevMinor,
  kRdevMajor,
  kRdevMinor,
  kNameSize,
  kCheck
};

constexpr size_t align4(size_t value) { return (value + 3) & ~size_t{3}; }

bool parse_hex8(const uint8_t* text, uint32_t& value) {
  value = 0;
  for (int i = 0; i < 8; ++i) {
    uint8_t c = text[i];
    uint32_t digit;
    if (c >= '0' && c <= '9')
      digit = c - '0';
    else if (c >= 'a' && c <= 'f')
      digit = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
      digit = c - 'A' + 10;
    else
      return false;
    value = value << 4 | digit;
  }
  return true;
}

bool has_newc_magic(const uint8_t* header) {
  // 070701 is newc without checksums, 070702 the same layout with checksums.
  static const char kMagic[] = "07070";
  for (int i = 0; i < 5; ++i) {
    if (header[i] != static_cast<uint8_t>(kMagic[i])) return false;
  }
  return header[5] == '1' || header[5] == '2';
}

bool names_equal(const char* a, const char* b) {
  while (*a != '\0' && *a == *b) {
    ++a;
    ++b;
  }
  return *a == *b;
}

const char* strip_prefix(const char* path) {
  for (;;) {
    if (path[0] == '/')
      ++path;
    else if (path[0] == '.' && path[1] == '/')
      path += 2;
    else
      return path;
  }
}

}  // namespace

const char* cpio_status_name(CpioStatus status) {
  switch (status) {
    case CpioStatus::ok: return "ok";
    case CpioStatus::end: return "end of archive";
    case CpioStatus::not_found: return "not found";
    case CpioStatus::truncated: return "truncated archive";
    case CpioStatus::bad_magic: return "bad magic (not newc)";
    case CpioStatus::bad_field: return "bad header field";
    case CpioStatus::bad_name: return "bad file name";
  }
  return "?";
}

CpioStatus CpioReader::next(CpioEntry& entry) {
  if (sticky_ != CpioStatus::ok) return sticky_;
  auto fail = [this](CpioStatus status) { return sticky_ = status; };

  if (offset_ > size_ || size_ - offset_ < kHeaderSize) return fail(CpioStatus::truncated);
  const uint8_t* header = base_ + offset_;
  if (!has_newc_magic(header)) return fail(CpioStatus::bad_magic);

  uint32_t fields[kFieldCount];
  for (size_t i = 0; i < kFieldCount; ++i) {
    if (!parse_hex8(header + 6 + 8 * i, fields[i])) return fail(CpioStatus::bad_field);
  }

  size_t name_size = fields[kNameSize];
  size_t name_offset = offset_ + kHeaderSize;
  if (name_size == 0) return fail(CpioStatus::bad_name);
  if (name_size > size_ - name_offset) return fail(CpioStatus::truncated);
  const char* name = reinterpret_cast<const char*>(base_ + name_offset);
  if (name[name_size - 1] != '\0') return fail(CpioStatus::bad_name);

  size_t data_offset = align4(name_offset + name_size);
  size_t file_size = fields[kFileSize];
  if (data_offset > size_ || file_size > size_ - data_offset) {
    return fail(CpioStatus::truncated);
  }
  if (names_equal(name, "TRAILER!!!")) return fail(CpioStatus::end);

  entry.name = name;
  entry.mode = fields[kMode];
  entry.data = base_ + data_offset;
  entry.size = file_size;
  offset_ = align4(data_offset + file_size);
  return CpioStatus::ok;
}

CpioStatus cpio_find(const void* archive, size_t size, const char* path, CpioEntry& entry) {
  constexpr uint32_t kTypeMask = 0170000;
  constexpr uint32_t kRegular = 0100000;
  const char* wanted = strip_prefix(path);
  CpioReader reader(archive, size);
  CpioEntry candidate;
  for (;;) {
    CpioStatus status = reader.next(candidate);
    if (status == CpioStatus::end) return CpioStatus::not_found;
    if (status != CpioStatus::ok) return status;
    if ((candidate.mode & kTypeMask) == kRegular && names_equal(strip_prefix(candidate.name), wanted)) {
      entry = candidate;
      return CpioStatus::ok;
    }
  }
}

}  // namespace lib
