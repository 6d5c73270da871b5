// Arithmetic on numbers read from a trace. A file says whatever it says: a TSC may jump by
// 2^63 or go backwards, a count may be 0xffffffff. The analyses keep every such number in an
// unsigned type and combine them only through these helpers, so nothing wraps or overflows:
// sums and products saturate at the type's maximum (an absurd input gives an absurd but
// well-defined figure, never undefined behaviour), and an interval that would be negative is
// empty.
#pragma once
#include <cstdint>
#include <limits>

namespace trace {

constexpr uint64_t kSaturated = std::numeric_limits<uint64_t>::max();

// a + b, saturating.
constexpr uint64_t saturating_add(uint64_t a, uint64_t b) {
  uint64_t sum = 0;
  return __builtin_add_overflow(a, b, &sum) ? kSaturated : sum;
}

// a * b, saturating.
constexpr uint64_t saturating_mul(uint64_t a, uint64_t b) {
  uint64_t product = 0;
  return __builtin_mul_overflow(a, b, &product) ? kSaturated : product;
}

// Cycles from `from` to `to`; 0 when the TSC went backwards (skew or a corrupt trace).
constexpr uint64_t elapsed(uint64_t from, uint64_t to) { return to > from ? to - from : 0; }

// A 128-bit total saturated to 64 bits (for printing).
constexpr uint64_t saturate(unsigned __int128 value) { return value > kSaturated ? kSaturated : uint64_t(value); }

}  // namespace trace
