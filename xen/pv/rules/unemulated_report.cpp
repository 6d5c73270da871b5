#include "pv/rules/unemulated_report.h"

namespace unemulated_report {
bool should_log(uint32_t reported, bool fatal) { return fatal || reported < kLoggedPerDomain; }

size_t format_bytes(const uint8_t* bytes, size_t count, char* out, size_t size) {
  static constexpr char digits[] = "0123456789abcdef";
  if (size == 0) return 0;
  size_t length = 0;
  auto put = [&](char c) {
    if (length + 1 < size) out[length++] = c;
  };
  if (count == 0) {
    for (const char* p = "none"; *p; ++p) put(*p);
  }
  for (size_t i = 0; i < count; ++i) {
    if (i) put(' ');
    put(digits[bytes[i] >> 4]);
    put(digits[bytes[i] & 15]);
  }
  out[length] = '\0';
  return length;
}

const char* vector_name(unsigned vector) {
  switch (vector) {
    case 6: return "#UD";
    case 13: return "#GP";
    default: return nullptr;
  }
}
}  // namespace unemulated_report
