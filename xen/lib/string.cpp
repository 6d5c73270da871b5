// The memory primitives the compiler may emit calls to. Freestanding only: on the host the
// C library provides them (this file is not in pure_sources.cmake).
#include <stddef.h>
#include <stdint.h>

extern "C" {
void* memcpy(void* dest, const void* src, size_t n) {
  void* d = dest;
  asm volatile("rep movsb" : "+D"(d), "+S"(src), "+c"(n) : : "memory");
  return dest;
}

void* memset(void* dest, int value, size_t n) {
  void* d = dest;
  asm volatile("rep stosb" : "+D"(d), "+c"(n) : "a"(value) : "memory");
  return dest;
}

void* memmove(void* dest, const void* src, size_t n) {
  auto* d = static_cast<uint8_t*>(dest);
  auto* s = static_cast<const uint8_t*>(src);
  if (d <= s || d >= s + n) return memcpy(dest, src, n);
  while (n--) d[n] = s[n];
  return dest;
}

int memcmp(const void* a, const void* b, size_t n) {
  auto* x = static_cast<const uint8_t*>(a);
  auto* y = static_cast<const uint8_t*>(b);
  for (size_t i = 0; i < n; ++i)
    if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
  return 0;
}

int strcmp(const char* a, const char* b) {
  while (*a && *a == *b) ++a, ++b;
  return (unsigned char)*a - (unsigned char)*b;
}

size_t strlen(const char* s) {
  size_t n = 0;
  while (s[n]) ++n;
  return n;
}

// Pure virtual calls and static-destructor registration never happen in the hypervisor.
void __cxa_pure_virtual() {
  for (;;) asm volatile("cli; hlt");
}
}
