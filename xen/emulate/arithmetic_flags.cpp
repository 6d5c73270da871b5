#include "emulate/arithmetic_flags.h"
#include "emulate/register_operand.h"

namespace emulate::rflags {
namespace {
uint64_t flag_if(bool condition, uint64_t bit) { return condition ? bit : 0; }

// PF: set when the low byte of the result has an even number of one bits.
bool even_parity(uint64_t result) {
  unsigned byte = static_cast<unsigned>(result & 0xff);
  byte ^= byte >> 4;
  byte ^= byte >> 2;
  byte ^= byte >> 1;
  return (byte & 1) == 0;
}

bool sign_of(uint64_t value, unsigned bytes) { return (value >> (8 * bytes - 1)) & 1; }

// SF, ZF, PF of a result truncated to `bytes`.
uint64_t result_flags(uint64_t result, unsigned bytes) {
  const uint64_t value = result & width_mask(bytes);
  return flag_if(value == 0, zero) | flag_if(sign_of(value, bytes), sign) | flag_if(even_parity(value), parity);
}
}  // namespace

uint64_t after_logical(uint64_t flags, uint64_t result, unsigned bytes) {
  const uint64_t defined = carry | overflow | zero | sign | parity;
  return (flags & ~defined) | result_flags(result, bytes);
}

uint64_t after_compare(uint64_t flags, uint64_t left, uint64_t right, unsigned bytes) {
  const uint64_t mask = width_mask(bytes);
  const uint64_t a = left & mask, b = right & mask;
  const uint64_t difference = (a - b) & mask;
  // Signed overflow: the operands differ in sign and the result's sign differs from `a`'s.
  const bool signed_overflow = sign_of((a ^ b) & (a ^ difference), bytes);
  const bool nibble_borrow = ((a ^ b ^ difference) & 0x10) != 0;
  return (flags & ~arithmetic) | result_flags(difference, bytes) | flag_if(a < b, carry) |
         flag_if(signed_overflow, overflow) | flag_if(nibble_borrow, adjust);
}

uint64_t after_bit_test(uint64_t flags, bool bit_was_set) { return (flags & ~carry) | flag_if(bit_was_set, carry); }

}  // namespace emulate::rflags
