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

uint64_t& gpr(TrapFrame& frame, Gpr which);
uint64_t gpr(const TrapFrame& frame, Gpr which);

// The operand's value, zero-extended.
uint64_t read(const TrapFrame& frame, RegisterOperand operand);
// What the whole 64-bit register holds after `value` is written to the operand: 32-bit
// writes zero the upper half, 8- and 16-bit writes keep the other bits.
uint64_t merged(uint64_t current, RegisterOperand operand, uint64_t value);

// All-ones in the low `bytes` bytes.
constexpr uint64_t width_mask(unsigned bytes) {
  return bytes >= 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * bytes)) - 1;
}
// Sign-extends the low `bytes` bytes of `value` to 64 bits.
constexpr int64_t sign_extend(uint64_t value, unsigned bytes) {
  const unsigned unused = 64 - 8 * bytes;
  return static_cast<int64_t>(value << unused) >> unused;
}

}  // namespace emulate
