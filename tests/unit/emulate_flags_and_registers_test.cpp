// The building blocks of execution: RFLAGS as the SDM defines them for each width, and
// partial-register writes.
#include <gtest/gtest.h>
#include "emulate/arithmetic_flags.h"
#include "emulate/register_operand.h"

namespace {
namespace rf = emulate::rflags;
using emulate::Gpr;
using emulate::RegisterOperand;
constexpr uint64_t kKeep = 0x202;  // IF and bit 1: never touched
}  // namespace

TEST(EmulateFlags, CompareSetsAllSixArithmeticFlags) {
  // 0x8000000000000000 - 1: no borrow, signed overflow (min - 1), positive result 0x7ff..ff:
  // low byte 0xff has eight ones (PF), and a borrow out of bit 3 (AF).
  EXPECT_EQ(rf::after_compare(kKeep, 0x8000000000000000ULL, 1, 8), kKeep | rf::overflow | rf::parity | rf::adjust);
  // 1 - 2 = -1: borrow, negative, PF (0xff), AF.
  EXPECT_EQ(rf::after_compare(kKeep, 1, 2, 8), kKeep | rf::carry | rf::sign | rf::parity | rf::adjust);
  // Equal: ZF and PF only; stale flags are replaced.
  EXPECT_EQ(rf::after_compare(kKeep | rf::arithmetic, 7, 7, 8), kKeep | rf::zero | rf::parity);
}

TEST(EmulateFlags, CompareWorksAtTheOperandWidth) {
  // As 32-bit values 0x1_00000000 and 0 are equal; upper bits must be ignored.
  EXPECT_TRUE(rf::after_compare(kKeep, 0x100000000ULL, 0, 4) & rf::zero);
  // 8-bit: 0x80 - 0x01 overflows; 0x7f has seven ones (no PF).
  EXPECT_EQ(rf::after_compare(kKeep, 0x80, 0x01, 1), kKeep | rf::overflow | rf::adjust);
}

TEST(EmulateFlags, LogicalClearsCarryAndOverflowAndKeepsAdjust) {
  EXPECT_EQ(rf::after_logical(kKeep | rf::carry | rf::overflow | rf::adjust, 0x8000000000000001ULL, 8),
            kKeep | rf::adjust | rf::sign);
  EXPECT_EQ(rf::after_logical(kKeep, 0xffffffff00000000ULL, 4), kKeep | rf::zero | rf::parity);
  EXPECT_EQ(rf::after_logical(kKeep, 0x80, 1), kKeep | rf::sign);
}

TEST(EmulateFlags, BitTestChangesOnlyCarry) {
  EXPECT_EQ(rf::after_bit_test(kKeep | rf::zero | rf::sign, true), kKeep | rf::zero | rf::sign | rf::carry);
  EXPECT_EQ(rf::after_bit_test(kKeep | rf::carry | rf::parity, false), kKeep | rf::parity);
}

TEST(EmulateRegisters, ReadsEveryWidth) {
  TrapFrame frame{};
  frame.rbx = 0x1122334455667788ULL;
  frame.r12 = 0xabcdef;
  EXPECT_EQ(emulate::read(frame, {Gpr::rbx, 8, false}), 0x1122334455667788ULL);
  EXPECT_EQ(emulate::read(frame, {Gpr::rbx, 4, false}), 0x55667788ULL);
  EXPECT_EQ(emulate::read(frame, {Gpr::rbx, 2, false}), 0x7788ULL);
  EXPECT_EQ(emulate::read(frame, {Gpr::rbx, 1, false}), 0x88ULL);
  EXPECT_EQ(emulate::read(frame, {Gpr::rbx, 1, true}), 0x77ULL) << "bh";
  EXPECT_EQ(emulate::read(frame, {Gpr::r12, 8, false}), 0xabcdefULL);
}

TEST(EmulateRegisters, PartialWritesFollowTheArchitecture) {
  const uint64_t old = 0x1122334455667788ULL;
  EXPECT_EQ(emulate::merged(old, {Gpr::rax, 8, false}, 0xaa), 0xaaULL);
  EXPECT_EQ(emulate::merged(old, {Gpr::rax, 4, false}, 0xffffffffaaaaaaaaULL), 0xaaaaaaaaULL) << "zero-extends";
  EXPECT_EQ(emulate::merged(old, {Gpr::rax, 2, false}, 0xaaaa), 0x112233445566aaaaULL);
  EXPECT_EQ(emulate::merged(old, {Gpr::rax, 1, false}, 0xaa), 0x11223344556677aaULL);
  EXPECT_EQ(emulate::merged(old, {Gpr::rax, 1, true}, 0xaa), 0x112233445566aa88ULL);
}

TEST(EmulateRegisters, EncodingOrderMapsToTheFrame) {
  TrapFrame frame{};
  for (unsigned i = 0; i < emulate::kGprCount; ++i) emulate::gpr(frame, static_cast<Gpr>(i)) = 100 + i;
  EXPECT_EQ(frame.rax, 100u);
  EXPECT_EQ(frame.rcx, 101u);
  EXPECT_EQ(frame.rdx, 102u);
  EXPECT_EQ(frame.rbx, 103u);
  EXPECT_EQ(frame.rsp, 104u);
  EXPECT_EQ(frame.rbp, 105u);
  EXPECT_EQ(frame.rsi, 106u);
  EXPECT_EQ(frame.rdi, 107u);
  EXPECT_EQ(frame.r8, 108u);
  EXPECT_EQ(frame.r15, 115u);
}
