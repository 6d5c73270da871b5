#pragma once
// The fuzzer's seeded pseudo-random numbers (fuzz/fuzz.cpp). Every operation draws from a
// stream of its own, derived from (seed, operation number) alone: operation N of a seed is
// the same whichever operation the run started at, so a failure at operation N replays with
// `fuzz=<seed> fuzz_start=N fuzz_ops=1`, or with the operations before it for the same state.
//
// xoshiro256** (Blackman and Vigna) seeded through splitmix64, written from the published
// algorithm description. Pure: compiled into the kernel and into the host unit tests.
#include <stddef.h>
#include <stdint.h>

namespace lib::fuzz {

// One step of splitmix64: advances `state` and returns a well-mixed 64-bit value.
constexpr uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

class Random {
 public:
  constexpr explicit Random(uint64_t seed) {
    uint64_t state = seed;
    for (uint64_t& word : s_) word = splitmix64(state);
  }
  // The stream of operation `op` of campaign `seed`: independent of every other operation's.
  static constexpr Random for_operation(uint64_t seed, uint64_t op) {
    uint64_t mix = seed;
    uint64_t a = splitmix64(mix);
    uint64_t b = op * 0xd1b54a32d192ed03ull;
    return Random(a ^ b ^ (b >> 29));
  }

  constexpr uint64_t next() {
    uint64_t result = rotl(s_[1] * 5, 7) * 9;
    uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  // Uniform in [0, n) (n > 0), by multiplying and keeping the high word (Lemire); the bias
  // is below 2^-32 for the small n used here.
  constexpr uint64_t below(uint64_t n) {
    return n == 0 ? 0 : static_cast<uint64_t>((static_cast<unsigned __int128>(next()) * n) >> 64);
  }
  // Uniform in [low, high] (inclusive).
  constexpr uint64_t between(uint64_t low, uint64_t high) { return low + below(high - low + 1); }
  constexpr bool percent(unsigned p) { return below(100) < p; }
  constexpr bool one_in(uint64_t n) { return below(n) == 0; }
  constexpr bool coin() { return next() >> 63; }
  // A value of `n` random low bits (n <= 64).
  constexpr uint64_t bits(unsigned n) { return n >= 64 ? next() : next() & ((1ull << n) - 1); }
  template <typename T, size_t N>
  constexpr const T& pick(const T (&items)[N]) {
    return items[below(N)];
  }
  // Index chosen with the given weights (a zero weight is never chosen); `count` > 0 and at
  // least one weight non-zero, else 0.
  constexpr unsigned weighted(const unsigned* weights, unsigned count) {
    uint64_t total = 0;
    for (unsigned i = 0; i < count; ++i) total += weights[i];
    if (total == 0) return 0;
    uint64_t point = below(total);
    for (unsigned i = 0; i < count; ++i) {
      if (point < weights[i]) return i;
      point -= weights[i];
    }
    return count - 1;
  }

 private:
  static constexpr uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4] = {};
};

}  // namespace lib::fuzz
