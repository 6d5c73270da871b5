// printf-style formatting into a fixed buffer, for the console and for guest-visible text.
// Supports %d %i %u %x %X %p %s %c %% with l/ll/z/h length, width, '-' and '0' flags.
#pragma once
#include <stdarg.h>
#include <stddef.h>

// Writes at most size-1 characters and a terminating NUL; returns the length it would have
// written without truncation (as vsnprintf does).
size_t format_to(char* buffer, size_t size, const char* fmt, va_list args);
size_t format_to(char* buffer, size_t size, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
