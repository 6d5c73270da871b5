#include "console/guest_text_filter.h"

namespace console {
size_t filter_guest_text(const char* text, size_t length, char* out) {
  size_t kept = 0;
  for (size_t i = 0; i < length; ++i)
    if (is_guest_printable(text[i]) || text[i] == '\n') out[kept++] = text[i];
  return kept;
}
}  // namespace console
