#pragma once
// A small printf-style formatter for the kernel (there is no libc in the guest kernel).
#include <stdarg.h>
#include <stddef.h>

namespace lib {

// Supports %d %i %u %x %X %p %s %c %% with the flags '0' and '-', a width, and the length
// modifiers l, ll, z. Always NUL-terminates when capacity > 0 and returns the length the
// full output would have had (like snprintf), so truncation is detectable.
size_t vformat(char* out, size_t capacity, const char* fmt, va_list args);
size_t format(char* out, size_t capacity, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));

}  // namespace lib
