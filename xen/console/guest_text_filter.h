// Pure: what of a guest's console text reaches the hypervisor console. Xen's guest_console_write
// keeps a domU's printable characters and tabs (its isprint: 0x20-0x7e and Latin-1's
// 0xa0-0xff) and ends lines at '\n'; everything else (a carriage return, ESC and the rest of an
// escape sequence's control bytes, the C1 controls 0x80-0x9f such as the 8-bit CSI) is dropped.
// Without it a domU could print "\r(XEN) audit: clean" and a reader of the serial log would
// take it for the hypervisor's own line, or move the cursor and rewrite what is on a terminal.
#pragma once
#include <stddef.h>

namespace console {
constexpr bool is_guest_printable(char c) {
  unsigned char byte = static_cast<unsigned char>(c);
  return (byte >= 0x20 && byte < 0x7f) || byte >= 0xa0 || c == '\t';
}

// Copies the bytes of `text` that pass (printable, '\t', and '\n' as a line end) to `out`,
// which has room for `length` bytes (it may be `text` itself); the count kept.
size_t filter_guest_text(const char* text, size_t length, char* out);
}  // namespace console
