#include "kernel/console.h"

#include <stdarg.h>

#include "arch/xen.h"
#include "common/format.h"

namespace kernel {

void console_write(const char* text, size_t length) {
  // Xen may write less than asked for (it returns the count written) for large buffers.
  while (length > 0) {
    long written = xen::console_write(text, length);
    if (written <= 0) return;
    text += written;
    length -= static_cast<size_t>(written);
  }
}

void print(const char* fmt, ...) {
  char buffer[512];
  va_list args;
  va_start(args, fmt);
  size_t length = format_to(buffer, sizeof(buffer), fmt, args);
  va_end(args);
  if (length >= sizeof(buffer)) length = sizeof(buffer) - 1;
  console_write(buffer, length);
}

}  // namespace kernel
