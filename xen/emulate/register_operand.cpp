#include "emulate/register_operand.h"

namespace emulate {
uint64_t merged(uint64_t current, RegisterOperand operand, uint64_t value) {
  if (operand.high_byte) return (current & ~uint64_t{0xff00}) | ((value & 0xff) << 8);
  if (operand.bytes >= 4) return value & width_mask(operand.bytes);
  const uint64_t mask = width_mask(operand.bytes);
  return (current & ~mask) | (value & mask);
}

}  // namespace emulate
