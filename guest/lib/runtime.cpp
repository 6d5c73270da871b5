// The handful of C library symbols the compiler may emit calls to even in freestanding code
// (structure copies and clears). Kernel only: the host build uses its libc.
#include <stddef.h>
#include <stdint.h>

extern "C" {

void* memcpy(void* destination, const void* source, size_t count) {
  auto* d = static_cast<uint8_t*>(destination);
  auto* s = static_cast<const uint8_t*>(source);
  for (size_t i = 0; i < count; ++i) d[i] = s[i];
  return destination;
}

void* memmove(void* destination, const void* source, size_t count) {
  auto* d = static_cast<uint8_t*>(destination);
  auto* s = static_cast<const uint8_t*>(source);
  if (d < s) {
    for (size_t i = 0; i < count; ++i) d[i] = s[i];
  } else {
    for (size_t i = count; i > 0; --i) d[i - 1] = s[i - 1];
  }
  return destination;
}

void* memset(void* destination, int value, size_t count) {
  auto* d = static_cast<uint8_t*>(destination);
  for (size_t i = 0; i < count; ++i) d[i] = static_cast<uint8_t>(value);
  return destination;
}

int memcmp(const void* a, const void* b, size_t count) {
  auto* x = static_cast<const uint8_t*>(a);
  auto* y = static_cast<const uint8_t*>(b);
  for (size_t i = 0; i < count; ++i) {
    if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
  }
  return 0;
}

}  // extern "C"
