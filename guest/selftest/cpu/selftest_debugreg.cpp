// selftest=debugreg: HYPERVISOR_set_debugreg / get_debugreg as Xen 4.17 answers them (Linux's
// xen_set_debugreg / xen_get_debugreg; hw_breakpoint reads DR6 and DR7): the reset values,
// DR0-3 taking guest addresses only (-EPERM in the hypervisor's range), DR6 / DR7 32-bit only
// (-EINVAL) with their reserved bits as the CPU reads them, DR7's general detect and an I/O
// breakpoint without CR4.DE -EPERM, DR4 / DR5 the aliases of DR6 / DR7 without CR4.DE, other
// numbers -ENODEV; then the same registers through mov (check_moves); then breakpoints that
// fire (selftest_debugreg_traps.cpp). The same checks run on Xen 4.17.
#include "arch/hypercall.h"
#include "arch/xen.h"
#include "arch/hostile_probes.h"
#include "selftest/cpu/cpu_selftests.h"
#include "pv-kernel-patches/shared_info.h"
#include <xen/version.h>

extern "C" long probe_syscall_flipped_rsp(long hypercall, long argument);

namespace kernel {
namespace {
long set(long reg, uint64_t value) { return arch::hypercall(__HYPERVISOR_set_debugreg, uint64_t(reg), value); }
long get(long reg) { return arch::hypercall(__HYPERVISOR_get_debugreg, uint64_t(reg)); }
volatile uint64_t watched;
constexpr long kGeneralProtection0 = 13l << 16, kInvalidOpcode = 6l << 16;
constexpr uint64_t kCr4De = 1u << 3;

uint64_t read_dr(SelfTest& test, unsigned dr) {
  uint64_t value = 0xdead;
  test.check("  mov from the debug register works", probe_read_dr(dr, &value), 0);
  return value;
}

// The same registers through mov (emulated after the #GP, Xen's x86emul_read_dr / write_dr):
// set_debugreg's refusals become #GP(0), a register that does not exist #UD. With CR4.DE the
// I/O breakpoint sequence of XTF's debug-regs test (tests/debug-regs: test_pv_dr7_io_breakpoints).
void check_moves(SelfTest& test) {
  for (unsigned dr = 0; dr < 4; ++dr) test.check("mov from DR0-3 reads 0", read_dr(test, dr), 0);
  test.check("mov from DR6 reads the reset value", read_dr(test, 6), 0xffff0ff0);
  test.check("mov from DR7 reads 0x400", read_dr(test, 7), 0x400);
  const uint64_t address = reinterpret_cast<uint64_t>(&watched);
  test.check("mov to DR0 of a kernel address works", probe_write_dr(0, address), 0);
  test.check("  get_debugreg 0 reads it", get(0), long(address));
  test.check("  mov from DR0 reads it", read_dr(test, 0), address);
  test.check("mov to DR1 in the hypervisor's range is #GP(0)", probe_write_dr(1, 0xffff800000001000ull),
             kGeneralProtection0);
  test.check("  DR1 is unchanged", get(1), 0);
  test.check("mov to DR7 with general detect is #GP(0)", probe_write_dr(7, 0x2000), kGeneralProtection0);
  test.check("mov to DR6 with an upper bit is #GP(0)", probe_write_dr(6, 1ull << 32), kGeneralProtection0);
  test.check("mov to DR6 with B1 works", probe_write_dr(6, 2), 0);
  test.check("  get_debugreg 6 reads it", get(6), 0xffff0ff2);
  test.check("mov from DR4 is DR6 without CR4.DE", read_dr(test, 4), 0xffff0ff2);
  test.check("mov to DR5 is DR7 without CR4.DE", probe_write_dr(5, 0x100), 0);
  test.check("  mov from DR7 reads it", read_dr(test, 7), 0x500);
  uint64_t value = 0;
  test.check("mov from DR8 (REX.R) is #UD", probe_read_dr(8, &value), kInvalidOpcode);
  test.check("mov to DR8 (REX.R) is #UD", probe_write_dr(8, 0), kInvalidOpcode);

  uint64_t cr4 = 0;
  test.check("mov from CR4 works", probe_read_cr(4, &cr4), 0);
  test.check("mov to CR4 setting DE works", probe_write_cr(4, cr4 | kCr4De), 0);
  uint64_t with_de = 0;
  test.check("  CR4 reads DE", probe_read_cr(4, &with_de) == 0 && (with_de & kCr4De), true);
  test.check("mov from DR4 with CR4.DE is #UD", probe_read_dr(4, &value), kInvalidOpcode);
  test.check("mov to DR5 with CR4.DE is #UD", probe_write_dr(5, 0), kInvalidOpcode);
  test.check("get_debugreg 4 with CR4.DE is -ENODEV", get(4), -XEN_ENODEV);
  // G0 | GE | R/W0 = I/O | LEN0 = 4 bytes, then G1's I/O type without an enable.
  const uint64_t io0 = 0x2 | 0x200 | (2u << 16) | (3u << 18) | 0x400, io1 = (2u << 20) | (3u << 22) | 0x400;
  test.check("mov to DR7 of an I/O breakpoint with CR4.DE works", probe_write_dr(7, io0), 0);
  test.check("  DR7 reads it back", read_dr(test, 7), io0);
  test.check("mov to DR7 of an inactive I/O breakpoint works", probe_write_dr(7, io1), 0);
  test.check("  DR7 reads it, not the old one", read_dr(test, 7), io1);
  test.check("mov to DR7 of the I/O breakpoint again works", probe_write_dr(7, io0), 0);
  test.check("mov to CR4 clearing DE works", probe_write_cr(4, cr4 & ~kCr4De), 0);
  test.check("mov to DR7 of an I/O breakpoint without CR4.DE is #GP(0)", probe_write_dr(7, io0), kGeneralProtection0);
  test.check("  DR7 keeps the configured one", read_dr(test, 7), io0);
  test.check("mov to DR7 0 works", probe_write_dr(7, 0), 0);
  test.check("  DR7 reads 0x400", read_dr(test, 7), 0x400);
  test.check("mov to DR0 0 works", probe_write_dr(0, 0), 0);
  test.check("mov to DR6 of its reset value works", probe_write_dr(6, 0xffff0ff0), 0);
}
}  // namespace

// XSA-260's stack without a breakpoint: a hypercall made on a non-canonical rsp, which the
// syscall entry's first instructions still run on. It must simply work (events masked, so
// nothing is delivered onto that stack). First, before any breakpoint is armed: under the
// hypervisor option selftest=syscall-entry-debug (ours) the entry then takes a #DB right there.
namespace {
void hypercall_on_a_flipped_stack(SelfTest& test) {
  const long version = xen::xen_version(XENVER_version, nullptr);
  volatile uint8_t& mask = vcpu()->evtchn_upcall_mask;
  const uint8_t was_masked = mask;
  mask = 1;
  const long got = probe_syscall_flipped_rsp(__HYPERVISOR_xen_version, XENVER_version);
  mask = was_masked;
  test.check("a hypercall with the top bit of rsp flipped (XSA-260's stack) works", got, version);
}
}  // namespace

void selftest_debugreg(SelfTest& test) {
  hypercall_on_a_flipped_stack(test);
  uint64_t cr4 = 0;
  test.check("mov from CR4 works", probe_read_cr(4, &cr4), 0);
  test.check("CR4.DE is clear (the guest never set it)", cr4 & (1u << 3), 0);
  test.check("get_debugreg 6: the reset value", get(6), 0xffff0ff0);
  test.check("get_debugreg 7: the reset value", get(7), 0x400);
  for (long reg = 0; reg < 4; ++reg) test.check("get_debugreg 0-3: 0", get(reg), 0);

  const uint64_t address = reinterpret_cast<uint64_t>(&watched);
  test.check("set_debugreg 0 to a kernel address works", set(0, address), 0);
  test.check("  and reads back", get(0), long(address));
  test.check("set_debugreg 3 to a user address works", set(3, 0x400000), 0);
  test.check("  and reads back", get(3), 0x400000);
  test.check("set_debugreg 1 in the hypervisor's range is -EPERM", set(1, 0xffff800000001000ull), -XEN_EPERM);
  test.check("set_debugreg 2 non-canonical is -EPERM", set(2, 0x0000800000000000ull), -XEN_EPERM);
  test.check("  and DR1 is unchanged", get(1), 0);

  test.check("set_debugreg 6 0 works", set(6, 0), 0);
  test.check("  DR6 reads its reserved ones", get(6), 0xffff0ff0);
  test.check("set_debugreg 6 with B0, BS and bit 12 works", set(6, 0x5001), 0);
  test.check("  DR6 reads B0 and BS, bit 12 as 0", get(6), 0xffff4ff1);
  test.check("set_debugreg 6 with an upper bit is -EINVAL", set(6, 1ull << 32), -XEN_EINVAL);
  test.check("set_debugreg 7 0 works (Linux's at boot)", set(7, 0), 0);
  test.check("  DR7 reads 0x400", get(7), 0x400);
  test.check("set_debugreg 7 with reserved bits 11, 12, 14, 15 works", set(7, 0xd800), 0);
  test.check("  they read 0", get(7), 0x400);
  test.check("set_debugreg 7 with general detect is -EPERM", set(7, 0x2000), -XEN_EPERM);
  test.check("set_debugreg 7 with an upper bit is -EINVAL", set(7, 1ull << 32), -XEN_EINVAL);
  test.check("set_debugreg 7 enabling an I/O breakpoint without CR4.DE is -EPERM", set(7, (2u << 20) | (1u << 2)),
             -XEN_EPERM);
  test.check("set_debugreg 7 with a disabled I/O type works", set(7, 2u << 20), 0);
  test.check("  and reads back", get(7), long((2u << 20) | 0x400));
  test.check("get_debugreg 4 is DR6 without CR4.DE", get(4), get(6));
  test.check("get_debugreg 5 is DR7 without CR4.DE", get(5), get(7));
  test.check("set_debugreg 5 writes DR7", set(5, 0), 0);
  test.check("  DR7 reads 0x400", get(7), 0x400);
  test.check("get_debugreg 8 is -ENODEV", get(8), -XEN_ENODEV);
  test.check("set_debugreg 8 is -ENODEV", set(8, 0), -XEN_ENODEV);
  test.check("get_debugreg -1 is -ENODEV", get(-1), -XEN_ENODEV);
  test.check("set_debugreg 0 back to 0 works", set(0, 0), 0);
  test.check("set_debugreg 3 back to 0 works", set(3, 0), 0);
  test.check("set_debugreg 6 back to its reset value works", set(6, 0xffff0ff0), 0);
  check_moves(test);
  selftest_debugreg_traps(test);
}
}  // namespace kernel
