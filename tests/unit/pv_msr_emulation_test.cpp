#include <gtest/gtest.h>

#include "pv/msr_emulation.h"

namespace {
using msr_emulation::Instruction;

TEST(PvMsrEmulation, DecodesWrmsrAndRdmsrWithOrWithoutRex) {
  const uint8_t wrmsr[] = {0x0f, 0x30}, rdmsr[] = {0x0f, 0x32}, rex_wrmsr[] = {0x48, 0x0f, 0x30};
  EXPECT_EQ(msr_emulation::decode(wrmsr, 2).instruction, Instruction::wrmsr);
  EXPECT_EQ(msr_emulation::decode(wrmsr, 2).length, 2u);
  EXPECT_EQ(msr_emulation::decode(rdmsr, 2).instruction, Instruction::rdmsr);
  EXPECT_EQ(msr_emulation::decode(rex_wrmsr, 3).length, 3u);
}

TEST(PvMsrEmulation, OtherOrTruncatedBytesAreNotMsrAccesses) {
  const uint8_t cpuid[] = {0x0f, 0xa2}, wrmsr[] = {0x0f, 0x30}, two_rex[] = {0x48, 0x48, 0x0f, 0x30};
  EXPECT_EQ(msr_emulation::decode(cpuid, 2).instruction, Instruction::none);
  EXPECT_EQ(msr_emulation::decode(wrmsr, 1).instruction, Instruction::none);
  EXPECT_EQ(msr_emulation::decode(wrmsr, 0).instruction, Instruction::none);
  EXPECT_EQ(msr_emulation::decode(two_rex, 4).instruction, Instruction::none);
}

TEST(PvMsrEmulation, SegmentBasesAreTheGuestKernelsOwn) {
  msr_emulation::SegmentBases bases{1, 2, 3};
  uint64_t value = 0;
  ASSERT_TRUE(msr_emulation::read(cpu::msr::fs_base, bases, value));
  EXPECT_EQ(value, 1u);
  ASSERT_TRUE(msr_emulation::read(cpu::msr::gs_base, bases, value));
  EXPECT_EQ(value, 2u);  // in kernel mode, GS_BASE is the kernel's
  ASSERT_TRUE(msr_emulation::read(cpu::msr::kernel_gs_base, bases, value));
  EXPECT_EQ(value, 3u);  // the shadow: user mode's
  ASSERT_TRUE(msr_emulation::write(cpu::msr::gs_base, 0xffffffff83044000ull, bases));
  EXPECT_EQ(bases.gs_kernel, 0xffffffff83044000ull);
  EXPECT_EQ(bases.gs_user, 3u);
}

TEST(PvMsrEmulation, NonCanonicalBasesAndOtherMsrsAreRefused) {
  msr_emulation::SegmentBases bases{1, 2, 3};
  EXPECT_FALSE(msr_emulation::write(cpu::msr::fs_base, 0x0000800000000000ull, bases));
  EXPECT_FALSE(msr_emulation::write(cpu::msr::kernel_gs_base, 0xffff000000000000ull, bases));
  EXPECT_EQ(bases.fs, 1u);
  EXPECT_EQ(bases.gs_user, 3u);
  uint64_t value = 7;
  for (uint32_t msr : {cpu::msr::efer, cpu::msr::lstar, cpu::msr::sfmask, cpu::msr::apic_base, 0x12345678u}) {
    EXPECT_FALSE(msr_emulation::read(msr, bases, value)) << std::hex << msr;
    EXPECT_FALSE(msr_emulation::write(msr, 0, bases)) << std::hex << msr;
  }
  EXPECT_EQ(value, 7u);
}
}  // namespace

#include "pv/interrupt_flag.h"

namespace {
TEST(PvInterruptFlag, CliAndStiAreNoOpsOnlyWithIoPrivilege) {
  const uint8_t cli[] = {0xfa}, sti[] = {0xfb}, hlt[] = {0xf4}, prefixed[] = {0x66, 0xfa};
  EXPECT_EQ(interrupt_flag::instruction_length(cli, 1), 1u);
  EXPECT_EQ(interrupt_flag::instruction_length(sti, 1), 1u);
  EXPECT_EQ(interrupt_flag::instruction_length(hlt, 1), 0u);
  EXPECT_EQ(interrupt_flag::instruction_length(prefixed, 2), 0u);
  EXPECT_EQ(interrupt_flag::instruction_length(cli, 0), 0u);
  EXPECT_FALSE(interrupt_flag::permitted(0));
  EXPECT_TRUE(interrupt_flag::permitted(1));
  EXPECT_TRUE(interrupt_flag::permitted(3));
}
}  // namespace
