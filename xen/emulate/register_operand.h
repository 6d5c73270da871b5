// General-register operands of an emulated instruction, read from and written to the guest's
// TrapFrame with x86 semantics for partial registers.
#pragma once
#include <stdint.h>
#include "arch/x86/cpu/trap_frame.h"

namespace emulate {

// Numbered as the instruction encoding numbers them (ModRM/REX), not as the TrapFrame
// stores them, so a decoded register converts without a lookup table.
enum class Gpr : uint8_t { rax, rcx, rdx, rbx, rsp, rbp, rsi, rdi, r8, r9, r10, r11, r12, r13, r14, r15 };
inline constexpr unsigned kGprCount = 16;

// One register operand: which register, how many bytes of it (1, 2, 4, 8), and whether it
// is one of the legacy high-byte registers AH, CH, DH, BH (bits 15:8).
struct RegisterOperand {
  Gpr gpr = Gpr::rax;
  uint8_t bytes = 8;
  bool high_byte = false;
};

// All-ones in the low `bytes` bytes.
constexpr uint64_t width_mask(unsigned bytes) { return bytes >= 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * bytes)) - 1; }

// Inline: the emulated PTE write reads two or three operands, and a call each cost more
// than the read.
namespace detail {
// TrapFrame member of each register, in encoding order.
inline constexpr uint64_t TrapFrame::*kFields[kGprCount] = {
    &TrapFrame::rax, &TrapFrame::rcx, &TrapFrame::rdx, &TrapFrame::rbx, &TrapFrame::rsp, &TrapFrame::rbp,
    &TrapFrame::rsi, &TrapFrame::rdi, &TrapFrame::r8,  &TrapFrame::r9,  &TrapFrame::r10, &TrapFrame::r11,
    &TrapFrame::r12, &TrapFrame::r13, &TrapFrame::r14, &TrapFrame::r15,
};
}  // namespace detail

inline uint64_t& gpr(TrapFrame& frame, Gpr which) { return frame.*detail::kFields[static_cast<unsigned>(which)]; }
inline uint64_t gpr(const TrapFrame& frame, Gpr which) { return frame.*detail::kFields[static_cast<unsigned>(which)]; }

// The operand's value, zero-extended.
inline uint64_t read(const TrapFrame& frame, RegisterOperand operand) {
  const uint64_t whole = gpr(frame, operand.gpr);
  if (operand.high_byte) return (whole >> 8) & 0xff;
  return whole & width_mask(operand.bytes);
}
// What the whole 64-bit register holds after `value` is written to the operand: 32-bit
// writes zero the upper half, 8- and 16-bit writes keep the other bits.
uint64_t merged(uint64_t current, RegisterOperand operand, uint64_t value);
// Sign-extends the low `bytes` bytes of `value` to 64 bits.
constexpr int64_t sign_extend(uint64_t value, unsigned bytes) {
  const unsigned unused = 64 - 8 * bytes;
  return static_cast<int64_t>(value << unused) >> unused;
}

}  // namespace emulate
