// The rules of pv/software_interrupt.h and pv/rules/virtual_iopl.h: Xen 4.17's permit_softint for a
// guest's `int $n`, the vector taken from the instruction (QEMU TCG's error code names 2n),
// sysenter's bytes, and iopl_ok for the kernel (classic and architectural IOPL) and user mode.
#include <gtest/gtest.h>

#include "pv/software_interrupt.h"
#include "pv/rules/virtual_iopl.h"

namespace {
TEST(PvSoftwareInterrupt, ErrorCodeNamesAnIdtEntryOnlyFromSoftware) {
  EXPECT_TRUE(software_interrupt::names_idt_entry(0x20 * 8 + 2));
  EXPECT_TRUE(software_interrupt::names_idt_entry(0x20 * 16 + 2));  // TCG's form
  EXPECT_FALSE(software_interrupt::names_idt_entry(0x20 * 8 + 3));  // an external event
  EXPECT_FALSE(software_interrupt::names_idt_entry(0));
  EXPECT_FALSE(software_interrupt::names_idt_entry(0x10));  // a GDT/LDT selector
}

TEST(PvSoftwareInterrupt, TheVectorIsTheInstructionsImmediate) {
  const uint8_t int20[] = {0xcd, 0x20}, int80[] = {0xcd, 0x80}, other[] = {0x90, 0x90};
  // Under TCG the error code of a refused `int $0x20` is 0x202: its index would be 0x40.
  EXPECT_EQ(software_interrupt::vector(int20, 2, 0x20 * 16 + 2), 0x20u);
  EXPECT_EQ(software_interrupt::vector(int80, 2, 0x80 * 16 + 2), 0x80u);
  // No `CD ib` readable at rip: the error code's index, as hardware and Xen have it.
  EXPECT_EQ(software_interrupt::vector(int20, 1, 0x21 * 8 + 2), 0x21u);
  EXPECT_EQ(software_interrupt::vector(other, 2, 0xff * 8 + 2), 0xffu);
  EXPECT_EQ(software_interrupt::vector(nullptr, 0, 0x80 * 16 + 2), 0u);  // 0x100, truncated as Xen's uint8_t
}

TEST(PvSoftwareInterrupt, ARefusalNamesTheIdtEntryAsHardwareDoes) {
  EXPECT_EQ(software_interrupt::refusal_error_code(0x80), 0x402u);  // XTF's XSA-259 test
  EXPECT_EQ(software_interrupt::refusal_error_code(0x81), 0x40au);
  EXPECT_EQ(software_interrupt::refusal_error_code(0xff), 0x7fau);
  EXPECT_TRUE(software_interrupt::names_idt_entry(software_interrupt::refusal_error_code(0x20)));
}

TEST(PvSoftwareInterrupt, TheTrapTableDplSaysWhoMayRaiseIt) {
  // User mode needs DPL 3; the guest kernel counts as ring 1 (a 64-bit PV kernel's int $n).
  for (uint8_t if_flag : {uint8_t(0), uint8_t(4)}) {
    EXPECT_TRUE(software_interrupt::permitted(if_flag | 3, false));
    EXPECT_FALSE(software_interrupt::permitted(if_flag | 2, false));
    EXPECT_FALSE(software_interrupt::permitted(if_flag | 0, false));
    EXPECT_TRUE(software_interrupt::permitted(if_flag | 3, true));
    EXPECT_TRUE(software_interrupt::permitted(if_flag | 1, true));
    EXPECT_FALSE(software_interrupt::permitted(if_flag | 0, true));
  }
}

TEST(PvSoftwareInterrupt, Int0x80ReachesItsHandlerWhateverItsDpl) {
  // Xen's int80_direct_trap: any handler of vector 0x80 gets it, from user mode too.
  EXPECT_TRUE(software_interrupt::delivered(0x80, 4 | 0, true, false));
  EXPECT_TRUE(software_interrupt::delivered(0x80, 0, true, true));
  // Without one, the #GP path's DPL check (XTF's XSA-259 test: #GP 0x402 from the kernel).
  EXPECT_FALSE(software_interrupt::delivered(0x80, 0, false, true));
  // Any other vector: the DPL alone.
  EXPECT_FALSE(software_interrupt::delivered(0x81, 4 | 0, true, true));
  EXPECT_TRUE(software_interrupt::delivered(0x81, 4 | 1, true, true));
  EXPECT_FALSE(software_interrupt::delivered(0x81, 4 | 1, true, false));
}

TEST(PvSoftwareInterrupt, Sysenter) {
  const uint8_t sysenter[] = {0x0f, 0x34}, syscall[] = {0x0f, 0x05};
  EXPECT_TRUE(software_interrupt::is_sysenter(sysenter, 2));
  EXPECT_FALSE(software_interrupt::is_sysenter(sysenter, 1));
  EXPECT_FALSE(software_interrupt::is_sysenter(syscall, 2));
}

TEST(PvVirtualIopl, KernelOneUnderTheClassicAbiZeroUnderTheArchitecturalOne) {
  EXPECT_EQ(virtual_iopl::privilege_level(true, false), 1u);
  EXPECT_EQ(virtual_iopl::privilege_level(true, true), 0u);
  EXPECT_EQ(virtual_iopl::privilege_level(false, false), 3u);
  EXPECT_EQ(virtual_iopl::privilege_level(false, true), 3u);
  // XTF pv-iopl's tables: PHYSDEVOP_set_iopl (classic) and VMASST_TYPE_architectural_iopl.
  for (unsigned iopl = 0; iopl <= 3; ++iopl) {
    EXPECT_EQ(virtual_iopl::allows(iopl, true, false), iopl >= 1) << iopl;
    EXPECT_EQ(virtual_iopl::allows(iopl, false, false), iopl == 3) << iopl;
    EXPECT_TRUE(virtual_iopl::allows(iopl, true, true)) << iopl;
    EXPECT_EQ(virtual_iopl::allows(iopl, false, true), iopl == 3) << iopl;
  }
}
}  // namespace
