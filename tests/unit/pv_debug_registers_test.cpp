#include <gtest/gtest.h>

#include "abi/xen_abi.h"
#include "pv/rules/debug_registers.h"

namespace {
using debug_registers::State;

uint64_t get(const State& state, unsigned reg, bool de = false) {
  uint64_t value = 0xdead;
  EXPECT_EQ(debug_registers::get(state, reg, de, value), 0) << reg;
  return value;
}

TEST(PvDebugRegisters, AFreshVcpuReadsTheCpusResetValues) {
  State state;
  for (unsigned reg = 0; reg < 4; ++reg) EXPECT_EQ(get(state, reg), 0u);
  EXPECT_EQ(get(state, 6), 0xffff0ff0u);
  EXPECT_EQ(get(state, 7), 0x400u);
  EXPECT_EQ(get(state, 4), 0xffff0ff0u);  // DR4/DR5 alias DR6/DR7 without CR4.DE
  EXPECT_EQ(get(state, 5), 0x400u);
}

TEST(PvDebugRegisters, AddressRegistersTakeGuestAddressesOnly) {
  State state;
  EXPECT_EQ(debug_registers::set(state, 0, 0xffffffff81000000ull, false), 0);
  EXPECT_EQ(debug_registers::set(state, 3, 0x400000, false), 0);
  EXPECT_EQ(get(state, 0), 0xffffffff81000000ull);
  EXPECT_EQ(get(state, 3), 0x400000u);
  EXPECT_EQ(debug_registers::set(state, 1, 0xffff800000001000ull, false), -XEN_EPERM);  // the hypervisor's
  EXPECT_EQ(debug_registers::set(state, 2, 0x0000800000000000ull, false), -XEN_EPERM);  // non-canonical
  EXPECT_EQ(get(state, 1), 0u);
}

TEST(PvDebugRegisters, StatusAndControlKeepTheirReservedBits) {
  State state;
  EXPECT_EQ(debug_registers::set(state, 6, 0, false), 0);
  EXPECT_EQ(get(state, 6), 0xffff0ff0u);
  EXPECT_EQ(debug_registers::set(state, 6, 0x1000 | 0x4001, false), 0);  // bit 12 reads 0
  EXPECT_EQ(get(state, 6), 0xffff4ff1u);
  EXPECT_EQ(debug_registers::set(state, 6, 1ull << 32, false), -XEN_EINVAL);
  EXPECT_EQ(debug_registers::set(state, 7, 0, false), 0);  // Linux's xen_set_debugreg(7, 0)
  EXPECT_EQ(get(state, 7), 0x400u);
  EXPECT_EQ(debug_registers::set(state, 7, 0xd801 | 0x10000, false), 0);  // bits 11, 12, 14, 15 read 0
  EXPECT_EQ(get(state, 7), 0x10401u);
  EXPECT_EQ(debug_registers::set(state, 7, 1ull << 32, false), -XEN_EINVAL);
  EXPECT_EQ(debug_registers::set(state, 7, 0x2000, false), -XEN_EPERM);  // general detect
  EXPECT_EQ(get(state, 7), 0x10401u);
}

TEST(PvDebugRegisters, IoBreakpointsNeedCr4DeAndAreEmulated) {
  State state;
  const uint64_t io_on_dr1 = (2u << 20) | (1u << 2);  // R/W1 = I/O, L1
  EXPECT_EQ(debug_registers::set(state, 7, io_on_dr1, false), -XEN_EPERM);
  EXPECT_EQ(debug_registers::set(state, 7, io_on_dr1, true), 0);
  EXPECT_EQ(state.dr7 & 0xff, 0u);         // not armed in the CPU's DR7
  EXPECT_EQ(state.dr7_emulated, 1u << 2);  // Xen's dr7_emul
  EXPECT_EQ(get(state, 7, true), io_on_dr1 | 0x400);
  EXPECT_EQ(debug_registers::set(state, 7, 0, true), 0);
  EXPECT_EQ(state.dr7_emulated, 0u);
  // An I/O R/W field with no breakpoint enabled is not checked.
  EXPECT_EQ(debug_registers::set(state, 7, 2u << 20, false), 0);
}

TEST(PvDebugRegisters, Dr4AndDr5AreUndefinedWithCr4DeAndOthersAlways) {
  State state;
  uint64_t value = 0;
  EXPECT_EQ(debug_registers::get(state, 4, true, value), -XEN_ENODEV);
  EXPECT_EQ(debug_registers::get(state, 5, true, value), -XEN_ENODEV);
  EXPECT_EQ(debug_registers::set(state, 4, 0, true), -XEN_ENODEV);
  EXPECT_EQ(debug_registers::set(state, 5, 0, true), -XEN_ENODEV);
  EXPECT_EQ(debug_registers::set(state, 5, 1, false), 0);  // DR7 through its alias
  EXPECT_EQ(get(state, 7), 0x401u);
  for (unsigned reg : {8u, 15u, 0xffffffffu}) {
    EXPECT_EQ(debug_registers::set(state, reg, 0, false), -XEN_ENODEV);
    EXPECT_EQ(debug_registers::get(state, reg, false, value), -XEN_ENODEV);
  }
}
}  // namespace

namespace {
// Xen's do_debug: the CPU's DR6 at a #DB into what the guest reads back.
TEST(PvDebugRegisters, StatusOfADebugExceptionIsAddedToTheGuestsDr6) {
  State state;
  debug_registers::record_status(state, 0xffff0ff1);  // B0: a data breakpoint in DR0
  EXPECT_EQ(state.dr6, 0xffff0ff1u);
  debug_registers::record_status(state, 0xffff4ff0);  // BS: a single step, B0 not repeated
  EXPECT_EQ(state.dr6, 0xffff4ff1u);                  // status bits stay until the guest clears them
  EXPECT_EQ(debug_registers::set(state, 6, 0, false), 0);
  EXPECT_EQ(state.dr6, 0xffff0ff0u);
  debug_registers::record_status(state, 0xfffe0ff0);  // RTM (bit 16) reads 0: cleared
  EXPECT_EQ(state.dr6, 0xfffe0ff0u);
  debug_registers::record_status(state, 0xffff0ff0);  // and not set again by a later #DB
  EXPECT_EQ(state.dr6, 0xfffe0ff0u);
}

TEST(PvDebugRegisters, ActiveMeansAnyLocalOrGlobalEnable) {
  EXPECT_FALSE(debug_registers::active(0x400));
  EXPECT_FALSE(debug_registers::active(0x300 | (3u << 16)));  // LE, GE and a type enable nothing
  for (unsigned bit = 0; bit < 8; ++bit) EXPECT_TRUE(debug_registers::active(0x400 | (1u << bit)));
}

// A #DB in hypervisor context: only an enabled instruction breakpoint the CPU reports counts;
// DR6's other bits (BD, BS, a data breakpoint's B0) are guest-controlled or sticky (XSA-265).
TEST(PvDebugRegisters, InstructionBreakpointHitNeedsStatusEnableAndExecuteType) {
  const uint64_t execute_dr2 = 0x400 | (1u << 4);                        // L2, R/W2 = 00 (execute)
  const uint64_t write_dr2 = 0x400 | (1u << 4) | (1u << 24);             // L2, R/W2 = 01 (write)
  const uint64_t read_write_dr0 = 0x400 | 2u | (3u << 16) | (3u << 18);  // G0, R/W0 = 11, LEN0 = 4
  EXPECT_TRUE(debug_registers::instruction_breakpoint_hit(0xffff0ff4, execute_dr2));
  EXPECT_FALSE(debug_registers::instruction_breakpoint_hit(0xffff0ff4, write_dr2));
  EXPECT_FALSE(debug_registers::instruction_breakpoint_hit(0xffff0ff4, 0x400));                 // not enabled
  EXPECT_FALSE(debug_registers::instruction_breakpoint_hit(0xffff0ff1, execute_dr2));           // B0, not B2
  EXPECT_FALSE(debug_registers::instruction_breakpoint_hit(0xffff2ff0 | 0x4000, execute_dr2));  // BD, BS
  EXPECT_FALSE(debug_registers::instruction_breakpoint_hit(0xffff0ff1, read_write_dr0));        // XSA-265's
}
}  // namespace
