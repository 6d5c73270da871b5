#include <gtest/gtest.h>

#include "pv/rules/msr_emulation.h"

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

// A CPU with MISC_ENABLE, the microcode revision and nothing else the rules read.
bool fake_hardware(uint32_t msr, uint64_t& value) {
  if (msr == msr_emulation::msr::misc_enable)
    value = 0x850089;  // fast strings, PERF_AVAIL, MONITOR...
  else if (msr == msr_emulation::msr::ucode_rev)
    value = 0x100000000ull;
  else if (msr == 0x12345600u)
    value = 42;  // an MSR the CPU has and Xen does not serve
  else
    return false;
  return true;
}
uint64_t fake_tsc() { return 1234; }

msr_emulation::Host intel_host() {
  msr_emulation::Host host;
  host.vendor = msr_emulation::Vendor::intel;
  host.efer = 0xd01;  // SCE, LME, LMA, NXE
  host.read_hardware = fake_hardware;
  host.read_tsc = fake_tsc;
  return host;
}

struct Guest {
  msr_emulation::Host host = intel_host();
  msr_emulation::SegmentBases bases{1, 2, 3};
  msr_emulation::VcpuMsrs vcpu;
  bool read(uint32_t msr, uint64_t& value) const { return msr_emulation::read(host, bases, vcpu, msr, value); }
  bool write(uint32_t msr, uint64_t value) { return msr_emulation::write(host, bases, vcpu, msr, value); }
  uint64_t value_of(uint32_t msr) const {
    uint64_t value = 0xdead;
    EXPECT_TRUE(read(msr, value)) << std::hex << msr;
    return value;
  }
};

TEST(PvMsrEmulation, SegmentBasesAreTheGuestKernelsOwn) {
  Guest guest;
  EXPECT_EQ(guest.value_of(cpu::msr::fs_base), 1u);
  EXPECT_EQ(guest.value_of(cpu::msr::gs_base), 2u);         // in kernel mode, GS_BASE is the kernel's
  EXPECT_EQ(guest.value_of(cpu::msr::kernel_gs_base), 3u);  // the shadow: user mode's
  ASSERT_TRUE(guest.write(cpu::msr::gs_base, 0xffffffff83044000ull));
  EXPECT_EQ(guest.bases.gs_kernel, 0xffffffff83044000ull);
  EXPECT_EQ(guest.bases.gs_user, 3u);
}

TEST(PvMsrEmulation, NonCanonicalBasesAndOtherMsrsAreRefused) {
  Guest guest;
  EXPECT_FALSE(guest.write(cpu::msr::fs_base, 0x0000800000000000ull));
  EXPECT_FALSE(guest.write(cpu::msr::kernel_gs_base, 0xffff000000000000ull));
  EXPECT_EQ(guest.bases.fs, 1u);
  EXPECT_EQ(guest.bases.gs_user, 3u);
  uint64_t value = 7;
  for (uint32_t msr : {cpu::msr::lstar, cpu::msr::star, cpu::msr::sfmask, 0x12345678u, 0x40000000u}) {
    EXPECT_FALSE(guest.read(msr, value)) << std::hex << msr;
    EXPECT_FALSE(guest.write(msr, 0)) << std::hex << msr;
  }
  EXPECT_EQ(value, 7u);
  // Read-only or refused for writing: APIC_BASE, PAT, the TSC, PLATFORM_INFO, FEATURE_CONTROL.
  for (uint32_t msr : {cpu::msr::apic_base, msr_emulation::msr::pat, msr_emulation::msr::tsc,
                       msr_emulation::msr::platform_info, msr_emulation::msr::feature_control, 0x79u})
    EXPECT_FALSE(guest.write(msr, guest.value_of(msr == 0x79u ? msr_emulation::msr::pat : msr))) << std::hex << msr;
}

TEST(PvMsrEmulation, VmceGlobalsAreXens) {
  Guest guest;
  EXPECT_EQ(guest.value_of(msr_emulation::msr::mcg_cap), 0x1000c02u);  // SER_P, TES_P, CMCI_P, 2 banks
  EXPECT_EQ(guest.value_of(msr_emulation::msr::mcg_status), 0u);
  EXPECT_EQ(guest.value_of(msr_emulation::msr::mcg_ctl), 0u);  // MCG_CTL_P is not offered
  EXPECT_TRUE(guest.write(msr_emulation::msr::mcg_status, 5));
  EXPECT_EQ(guest.value_of(msr_emulation::msr::mcg_status), 5u);
  EXPECT_TRUE(guest.write(msr_emulation::msr::mcg_cap, 0));  // read-only: ignored
  EXPECT_EQ(guest.value_of(msr_emulation::msr::mcg_cap), 0x1000c02u);
  EXPECT_TRUE(guest.write(msr_emulation::msr::mcg_ctl, 0));
  uint64_t value = 0;
  EXPECT_FALSE(guest.read(msr_emulation::msr::mcg_ext_ctl, value));  // no LMCE
  EXPECT_FALSE(guest.write(msr_emulation::msr::mcg_ext_ctl, 0));
  guest.host.vendor = msr_emulation::Vendor::amd;
  EXPECT_EQ(guest.value_of(msr_emulation::msr::mcg_cap), 2u);
}

TEST(PvMsrEmulation, VmceBanksOnlyClearAndTheRestReadsZero) {
  Guest guest;
  for (unsigned bank = 0; bank < 2; ++bank) {
    const uint32_t ctl = 0x400 + 4 * bank;
    EXPECT_EQ(guest.value_of(ctl), ~0ull);
    EXPECT_TRUE(guest.write(ctl, 0));  // clearing MCi_CTL is ignored
    EXPECT_EQ(guest.value_of(ctl), ~0ull);
    for (uint32_t reg = ctl + 1; reg <= ctl + 3; ++reg) {
      EXPECT_EQ(guest.value_of(reg), 0u);
      EXPECT_FALSE(guest.write(reg, 1)) << std::hex << reg;  // only 0 may be written
      EXPECT_TRUE(guest.write(reg, 0));
    }
    EXPECT_TRUE(guest.write(0x280 + bank, 0x4000 + bank));  // Intel's CTL2: the guest's
    EXPECT_EQ(guest.value_of(0x280 + bank), 0x4000u + bank);
  }
  // Beyond the two banks (up to MC31_MISC, CTL2 31): read 0, writes ignored, even nonzero ones.
  for (uint32_t msr : {0x408u, 0x409u, 0x47fu, 0x282u, 0x29fu}) {
    EXPECT_EQ(guest.value_of(msr), 0u) << std::hex << msr;
    EXPECT_TRUE(guest.write(msr, 1)) << std::hex << msr;
    EXPECT_EQ(guest.value_of(msr), 0u) << std::hex << msr;
  }
  EXPECT_EQ(guest.value_of(msr_emulation::msr::p5_mc_addr), 0u);
  EXPECT_EQ(guest.value_of(msr_emulation::msr::p5_mc_type), 0u);
  EXPECT_FALSE(guest.write(msr_emulation::msr::p5_mc_addr, 0));  // not in guest_wrmsr's vMCE ranges
  uint64_t value = 0;
  EXPECT_FALSE(guest.read(0x480, value));  // past MC31_MISC
}

TEST(PvMsrEmulation, PlatformMsrsAsXenServesThem) {
  Guest guest;
  EXPECT_EQ(guest.value_of(msr_emulation::msr::pat), 0x050100070406u);
  EXPECT_EQ(guest.value_of(cpu::msr::efer), 0xd01u);
  guest.host.efer = 0xd01 | (1u << 12) | (1u << 15);  // SVME and an unknown bit: hidden
  EXPECT_EQ(guest.value_of(cpu::msr::efer), 0xd01u);
  EXPECT_TRUE(guest.write(cpu::msr::efer, 0xd01));   // its own value back
  EXPECT_FALSE(guest.write(cpu::msr::efer, 0x501));  // clearing NX
  EXPECT_FALSE(guest.write(cpu::msr::efer, 0xd01 | (1u << 12)));
  EXPECT_EQ(guest.value_of(cpu::msr::apic_base), 0xfee00900u);  // enabled, BSP
  guest.host.vcpu_id = 1;
  EXPECT_EQ(guest.value_of(cpu::msr::apic_base), 0xfee00800u);
  // MISC_ENABLE: perfmon and MONITOR hidden, BTS/PEBS unavailable and xTPR off forced.
  EXPECT_EQ(guest.value_of(msr_emulation::msr::misc_enable), (0x850089u & ~0x40080u) | 0x801800u);
  EXPECT_TRUE(guest.write(msr_emulation::msr::misc_enable, 0));  // dropped, as Xen's "invalid"
  EXPECT_EQ(guest.value_of(msr_emulation::msr::ucode_rev), 0x100000000u);
  EXPECT_TRUE(guest.write(msr_emulation::msr::ucode_rev, 0));
  EXPECT_FALSE(guest.write(msr_emulation::msr::ucode_rev, 1));
  EXPECT_EQ(guest.value_of(msr_emulation::msr::tsc), 1234u);
  EXPECT_EQ(guest.value_of(msr_emulation::msr::feature_control), 1u);
  EXPECT_EQ(guest.value_of(msr_emulation::msr::platform_info), 0u);
  EXPECT_FALSE(guest.write(msr_emulation::msr::misc_features_enables, 1));  // no CPUID faulting
  EXPECT_TRUE(guest.write(msr_emulation::msr::misc_features_enables, 0));
  EXPECT_EQ(guest.value_of(0xc1), 0u);  // vPMU off
  EXPECT_TRUE(guest.write(0x186, 0x43003c));
  EXPECT_EQ(guest.value_of(0x186), 0u);
}

TEST(PvMsrEmulation, VendorDecidesIntelOnlyMsrs) {
  Guest guest;
  guest.host.vendor = msr_emulation::Vendor::amd;
  uint64_t value = 0;
  EXPECT_FALSE(guest.read(msr_emulation::msr::feature_control, value));
  EXPECT_FALSE(guest.write(msr_emulation::msr::ucode_rev, 0));  // Intel's write of 0 only
  EXPECT_TRUE(guest.write(0x280, 5));  // CTL2 is Intel's: on AMD the range reads 0, ignores writes
  EXPECT_EQ(guest.value_of(0x280), 0u);
  EXPECT_FALSE(guest.read(0xc1, value));      // Intel's counters
  EXPECT_EQ(guest.value_of(0xc0010004), 0u);  // AMD's
}

TEST(PvMsrEmulation, MissingHardwareMsrsAreTheGuestsGp) {
  Guest guest;
  guest.host.read_hardware = nullptr;
  uint64_t value = 0;
  EXPECT_FALSE(guest.read(msr_emulation::msr::misc_enable, value));
  EXPECT_FALSE(guest.write(msr_emulation::msr::misc_enable, 0));
  EXPECT_FALSE(guest.read(msr_emulation::msr::ucode_rev, value));
}

TEST(PvMsrEmulation, ReadsAreFakedOnlyBeforeTheGuestHasAGpHandler) {
  Guest guest;
  uint64_t value = 9;
  EXPECT_FALSE(guest.read(0x12345600u, value));
  guest.host.guest_has_gp_handler = false;
  ASSERT_TRUE(guest.read(0x12345600u, value));
  EXPECT_EQ(value, 0u);                          // never the hardware's value
  EXPECT_FALSE(guest.read(0x12345678u, value));  // the CPU does not have it either
  EXPECT_FALSE(guest.write(0x12345600u, 0));     // writes are never faked
}
}  // namespace

#include "pv/rules/interrupt_flag.h"

namespace {
TEST(PvInterruptFlag, CliAndStiAreOneByteWithoutPrefix) {
  const uint8_t cli[] = {0xfa}, sti[] = {0xfb}, hlt[] = {0xf4}, prefixed[] = {0x66, 0xfa};
  EXPECT_EQ(interrupt_flag::instruction_length(cli, 1), 1u);
  EXPECT_EQ(interrupt_flag::instruction_length(sti, 1), 1u);
  EXPECT_EQ(interrupt_flag::instruction_length(hlt, 1), 0u);
  EXPECT_EQ(interrupt_flag::instruction_length(prefixed, 2), 0u);
  EXPECT_EQ(interrupt_flag::instruction_length(cli, 0), 0u);
}
}  // namespace
