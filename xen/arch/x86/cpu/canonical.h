// x86-64's canonical addresses (48-bit virtual addresses: bits 63..47 all equal). One
// definition for every check of a guest-supplied address.
#pragma once
#include <stdint.h>

namespace cpu {
constexpr bool canonical(uint64_t va) {
  const uint64_t top = va >> 47;
  return top == 0 || top == 0x1ffff;
}
}  // namespace cpu
