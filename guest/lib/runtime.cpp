// The handful of C library symbols the compiler may emit calls to even in freestanding code
// (structure copies and clears). Kernel only: the host build uses its libc.
#include <stddef.h>
#include <stdint.h>

extern "C" {

// Eight bytes at a time, then the rest (Westmere has no fast `rep movsb`; a relay frame, a
// copied page and a zeroed structure are all mostly whole words). Forwards only.
void* memcpy(void* destination, const void* source, size_t count) {
  void* d = destination;
  size_t words = count / 8, rest = count % 8;
  asm volatile("rep movsq" : "+D"(d), "+S"(source), "+c"(words) : : "memory");
  asm volatile("rep movsb" : "+D"(d), "+S"(source), "+c"(rest) : : "memory");
  return destination;
}

void* memmove(void* destination, const void* source, size_t count) {
  auto* d = static_cast<uint8_t*>(destination);
  auto* s = static_cast<const uint8_t*>(source);
  if (d <= s || d >= s + count) return memcpy(destination, source, count);  // no overlap a forward copy breaks
  for (size_t i = count; i > 0; --i) d[i - 1] = s[i - 1];
  return destination;
}

void* memset(void* destination, int value, size_t count) {
  void* d = destination;
  const uint64_t pattern = uint64_t(uint8_t(value)) * 0x0101010101010101ull;
  size_t words = count / 8, rest = count % 8;
  asm volatile("rep stosq" : "+D"(d), "+c"(words) : "a"(pattern) : "memory");
  asm volatile("rep stosb" : "+D"(d), "+c"(rest) : "a"(pattern) : "memory");
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
