#include <gtest/gtest.h>

#include "pv/rules/debug_register_moves.h"

namespace {
using debug_register_moves::Outcome;
using debug_registers::State;

control_registers::Decoded decode(std::initializer_list<uint8_t> bytes) {
  return debug_register_moves::decode(bytes.begin(), bytes.size());
}

TEST(PvDebugRegisterMoves, DecodesBothDirectionsAndTheRegisters) {
  const auto from = decode({0x0f, 0x21, 0xfa});  // mov %dr7, %rdx
  ASSERT_TRUE(from.valid);
  EXPECT_FALSE(from.to_cr);
  EXPECT_EQ(from.cr, 7u);
  EXPECT_EQ(from.gpr, emulate::Gpr::rdx);
  EXPECT_EQ(from.length, 3u);
  const auto to = decode({0x41, 0x0f, 0x23, 0xc1});  // mov %r9, %dr0
  ASSERT_TRUE(to.valid);
  EXPECT_TRUE(to.to_cr);
  EXPECT_EQ(to.cr, 0u);
  EXPECT_EQ(to.gpr, emulate::Gpr::r9);
  EXPECT_EQ(to.length, 4u);
  EXPECT_EQ(decode({0x44, 0x0f, 0x21, 0xc2}).cr, 8u);  // REX.R: DR8
  EXPECT_FALSE(decode({0x0f, 0x20, 0xc0}).valid);      // mov %cr0: not a debug register
  EXPECT_FALSE(decode({0x0f, 0x21}).valid);            // truncated
}

TEST(PvDebugRegisterMoves, ControlRegisterDecodeStillRefusesCr8) {
  const uint8_t cr8[] = {0x44, 0x0f, 0x20, 0xc0};
  EXPECT_FALSE(control_registers::decode(cr8, sizeof(cr8)).valid);
  const uint8_t cr4[] = {0x0f, 0x22, 0xe0};
  EXPECT_EQ(control_registers::decode(cr4, sizeof(cr4)).cr, 4u);
}

TEST(PvDebugRegisterMoves, ReadsAndWritesTheSetDebugregState) {
  State state;
  uint64_t gpr = 0x400000;
  EXPECT_EQ(debug_register_moves::perform(state, decode({0x0f, 0x23, 0xc8}), gpr, false), Outcome::done);  // dr1
  EXPECT_EQ(state.dr[1], 0x400000u);
  gpr = 0;
  EXPECT_EQ(debug_register_moves::perform(state, decode({0x0f, 0x21, 0xc8}), gpr, false), Outcome::done);
  EXPECT_EQ(gpr, 0x400000u);
  EXPECT_EQ(debug_register_moves::perform(state, decode({0x0f, 0x21, 0xf0}), gpr, false), Outcome::done);  // dr6
  EXPECT_EQ(gpr, 0xffff0ff0u);
}

TEST(PvDebugRegisterMoves, RefusedValuesAreGeneralProtectionAndKeepTheRegister) {
  State state;
  uint64_t gpr = 0xffff800000001000ull;  // the hypervisor's range
  EXPECT_EQ(debug_register_moves::perform(state, decode({0x0f, 0x23, 0xc0}), gpr, false), Outcome::general_protection);
  EXPECT_EQ(state.dr[0], 0u);
  gpr = 0x2000;  // DR7.GD
  EXPECT_EQ(debug_register_moves::perform(state, decode({0x0f, 0x23, 0xf8}), gpr, false), Outcome::general_protection);
  gpr = (2u << 16) | 0x2 | (3u << 18);  // an enabled I/O breakpoint without CR4.DE
  EXPECT_EQ(debug_register_moves::perform(state, decode({0x0f, 0x23, 0xf8}), gpr, false), Outcome::general_protection);
  EXPECT_EQ(state.dr7, 0x400u);
  EXPECT_EQ(debug_register_moves::perform(state, decode({0x0f, 0x23, 0xf8}), gpr, true), Outcome::done);
  uint64_t read = 0;
  EXPECT_EQ(debug_register_moves::perform(state, decode({0x0f, 0x21, 0xf8}), read, false), Outcome::done);
  EXPECT_EQ(read, gpr | 0x400);  // the I/O enable reads back (Xen's dr7_emul)
}

TEST(PvDebugRegisterMoves, MissingRegistersAreInvalidOpcode) {
  State state;
  uint64_t gpr = 0x1234;
  // DR4 / DR5 alias DR6 / DR7 without CR4.DE, and do not exist with it.
  EXPECT_EQ(debug_register_moves::perform(state, decode({0x0f, 0x21, 0xe0}), gpr, false), Outcome::done);
  EXPECT_EQ(gpr, 0xffff0ff0u);
  gpr = 0x1234;
  EXPECT_EQ(debug_register_moves::perform(state, decode({0x0f, 0x21, 0xe8}), gpr, true), Outcome::invalid_opcode);
  EXPECT_EQ(gpr, 0x1234u);
  EXPECT_EQ(debug_register_moves::perform(state, decode({0x0f, 0x23, 0xe8}), gpr, true), Outcome::invalid_opcode);
  EXPECT_EQ(state.dr7, 0x400u);
  EXPECT_EQ(debug_register_moves::perform(state, decode({0x44, 0x0f, 0x21, 0xc2}), gpr, false),
            Outcome::invalid_opcode);
  EXPECT_EQ(debug_register_moves::perform(state, decode({0x44, 0x0f, 0x23, 0xc2}), gpr, false),
            Outcome::invalid_opcode);
}
}  // namespace
