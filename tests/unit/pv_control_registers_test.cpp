// mov to and from the control registers of a PV kernel (pv/rules/control_registers), as Xen 4.17's
// read_cr / write_cr: decoding, CR0's TS, CR4's guest view, refusals.
#include "pv/rules/control_registers.h"

#include <gtest/gtest.h>

namespace {
namespace cr = control_registers;
using emulate::Gpr;

TEST(ControlRegisters, DecodesMovFromAndToCr) {
  const uint8_t from_cr4[] = {0x0f, 0x20, 0xe0};         // mov %cr4, %rax
  const uint8_t to_cr0_r9[] = {0x41, 0x0f, 0x22, 0xc1};  // mov %r9, %cr0
  cr::Decoded d = cr::decode(from_cr4, sizeof(from_cr4));
  EXPECT_TRUE(d.valid);
  EXPECT_FALSE(d.to_cr);
  EXPECT_EQ(d.cr, 4u);
  EXPECT_EQ(d.gpr, Gpr::rax);
  EXPECT_EQ(d.length, 3u);
  d = cr::decode(to_cr0_r9, sizeof(to_cr0_r9));
  EXPECT_TRUE(d.valid);
  EXPECT_TRUE(d.to_cr);
  EXPECT_EQ(d.cr, 0u);
  EXPECT_EQ(d.gpr, Gpr::r9);
  EXPECT_EQ(d.length, 4u);
}

TEST(ControlRegisters, RefusesWhatIsNotAControlRegisterMove) {
  const uint8_t cr8[] = {0x44, 0x0f, 0x20, 0xc0};  // REX.R: mov %cr8, %rax
  const uint8_t truncated[] = {0x0f, 0x20};
  const uint8_t debug_register[] = {0x0f, 0x21, 0xc0};
  EXPECT_FALSE(cr::decode(cr8, sizeof(cr8)).valid);
  EXPECT_FALSE(cr::decode(truncated, sizeof(truncated)).valid) << "at a page end";
  EXPECT_FALSE(cr::decode(debug_register, sizeof(debug_register)).valid);
  EXPECT_FALSE(cr::decode(nullptr, 0).valid);
}

cr::State machine() {
  cr::State state;
  state.hardware_cr0 = 0x80050033;  // PG, AM, WP, NE, ET, MP, PE
  state.hardware_cr4 = cr::cr4_pae | cr::cr4_osfxsr | cr::cr4_osxmmexcpt | (1u << 7) /* PGE */;
  state.policy = cr::Cr4Policy{true, true, false, false};
  state.guest_cr4 = cr::guest_cr4(0, state.hardware_cr4, state.policy);
  state.kernel_table_mfn = 0x1234;
  state.cr2 = 0xdead000;
  return state;
}

TEST(ControlRegisters, Cr0IsTheHardwaresWithTheGuestsTs) {
  cr::State state = machine();
  uint64_t value = 0;
  ASSERT_TRUE(cr::read(state, 0, value));
  EXPECT_EQ(value, 0x80050033u);
  ASSERT_TRUE(cr::write(state, 0, 0x80050033u | cr::cr0_ts));
  ASSERT_TRUE(cr::read(state, 0, value));
  EXPECT_EQ(value, 0x80050033u | cr::cr0_ts);
  EXPECT_FALSE(cr::write(state, 0, 0x80050033u & ~(1u << 16))) << "WP is not the guest's";
  EXPECT_FALSE(cr::write(state, 0, 0)) << "nor PE and PG";
  EXPECT_TRUE(state.task_switched) << "a refused write changes nothing";
}

TEST(ControlRegisters, Cr4IsTheGuestsView) {
  cr::State state = machine();
  uint64_t value = 0;
  ASSERT_TRUE(cr::read(state, 4, value));
  EXPECT_EQ(value, cr::cr4_pae | cr::cr4_osfxsr | cr::cr4_osxmmexcpt) << "PGE is not visible";
  ASSERT_TRUE(cr::write(state, 4, value | cr::cr4_de | cr::cr4_fsgsbase | cr::cr4_osxsave | (1u << 7)));
  ASSERT_TRUE(cr::read(state, 4, value));
  EXPECT_EQ(value, cr::cr4_pae | cr::cr4_osfxsr | cr::cr4_osxmmexcpt | cr::cr4_de)
      << "DE offered; FSGSBASE and OSXSAVE not in the policy; PGE never the guest's";
  ASSERT_TRUE(cr::write(state, 4, 0));
  ASSERT_TRUE(cr::read(state, 4, value));
  EXPECT_EQ(value, cr::cr4_pae | cr::cr4_osfxsr | cr::cr4_osxmmexcpt) << "the hardware bits stay visible";
}

TEST(ControlRegisters, Cr2Cr3ReadOthersRefused) {
  cr::State state = machine();
  uint64_t value = 0;
  ASSERT_TRUE(cr::read(state, 3, value));
  EXPECT_EQ(value, 0x1234000u);
  ASSERT_TRUE(cr::read(state, 2, value));
  EXPECT_EQ(value, 0xdead000u);
  for (unsigned reg : {1u, 5u, 6u, 7u}) EXPECT_FALSE(cr::read(state, reg, value)) << reg;
  for (unsigned reg : {1u, 2u, 3u, 5u, 7u}) EXPECT_FALSE(cr::write(state, reg, 0)) << reg;
}
}  // namespace
