#include "emulate/register_operand.h"

namespace emulate {
namespace {
// TrapFrame member of each register, in encoding order.
constexpr uint64_t TrapFrame::* kFields[kGprCount] = {
    &TrapFrame::rax, &TrapFrame::rcx, &TrapFrame::rdx, &TrapFrame::rbx,
    &TrapFrame::rsp, &TrapFrame::rbp, &TrapFrame::rsi, &TrapFrame::rdi,
    &TrapFrame::r8,  &TrapFrame::r9,  &TrapFrame::r10, &TrapFrame::r11,
    &TrapFrame::r12, &TrapFrame::r13, &TrapFrame::r14, &TrapFrame::r15,
};
}  // namespace

uint64_t& gpr(TrapFrame& frame, Gpr which) { return frame.*kFields[static_cast<unsigned>(which)]; }
uint64_t gpr(const TrapFrame& frame, Gpr which) { return frame.*kFields[static_cast<unsigned>(which)]; }

uint64_t read(const TrapFrame& frame, RegisterOperand operand) {
  const uint64_t whole = gpr(frame, operand.gpr);
  if (operand.high_byte) return (whole >> 8) & 0xff;
  return whole & width_mask(operand.bytes);
}

uint64_t merged(uint64_t current, RegisterOperand operand, uint64_t value) {
  if (operand.high_byte) return (current & ~uint64_t{0xff00}) | ((value & 0xff) << 8);
  if (operand.bytes >= 4) return value & width_mask(operand.bytes);
  const uint64_t mask = width_mask(operand.bytes);
  return (current & ~mask) | (value & mask);
}

}  // namespace emulate
