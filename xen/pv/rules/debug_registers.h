// Pure: HYPERVISOR_set_debugreg / get_debugreg as Xen 4.17 answers them (pv/misc-hypercalls.c
// set_debugreg, x86_emulate's read_dr): DR0-3 take a guest address (__addr_ok: not in the
// hypervisor's range, else -EPERM); DR6 and DR7 only 32-bit values (-EINVAL), their reserved
// bits forced to what the CPU reads; DR7's general-detect bit is -EPERM and an I/O breakpoint
// needs the guest's CR4.DE (-EPERM), and is Xen's "emulated" part of DR7 (dr7_emul); DR4 / DR5
// alias DR6 / DR7 unless CR4.DE (-ENODEV), as does any other number. Linux's xen_set_debugreg
// ignores the result; its get_debugreg values go into hw_breakpoint and the oops dumps.
// The values are the vCPU's, read back as set; domain/debug_register_cpu loads them into the CPU
// while the vCPU runs, and pv/debug_exception folds what a #DB reports into `dr6` here.
#pragma once
#include <stdint.h>

namespace debug_registers {
inline constexpr uint64_t kDr6Default = 0xffff0ff0, kDr7Default = 0x400;  // X86_DR{6,7}_DEFAULT

struct State {
  uint64_t dr[4] = {};
  uint64_t dr6 = kDr6Default;
  uint64_t dr7 = kDr7Default;
  uint64_t dr7_emulated = 0;  // the enable bits of I/O breakpoints (Xen's dr7_emul)
};

// 0, or -EPERM / -EINVAL / -ENODEV with `state` unchanged. `cr4_de`: the guest's CR4.DE.
long set(State& state, unsigned reg, uint64_t value, bool cr4_de);
// 0 with `value`, or -ENODEV.
long get(const State& state, unsigned reg, bool cr4_de, uint64_t& value);

// Whether DR7 enables a breakpoint (L0-3 or G0-3, Xen's DR7_ACTIVE_MASK): only then are the
// registers loaded into the CPU, as Xen loads them.
constexpr bool active(uint64_t dr7) { return dr7 & 0xff; }

// What the guest reads in DR6 after a #DB taken in its context, as Xen's do_debug merges the
// CPU's DR6 (`reported`) into the vCPU's: a status bit the CPU sets (B0-3, BD, BS, BT) is added
// and stays until the guest clears it; a bit that reads 1 by default and the CPU cleared (RTM)
// is cleared.
void record_status(State& state, uint64_t reported);

// A #DB in hypervisor context: whether DR6 (`reported`) names an instruction breakpoint that
// DR7 (`loaded`) enables. A guest can point DR0-3 at guest addresses only, which the
// hypervisor never executes, so this is never expected; Xen then disables every breakpoint,
// since an instruction breakpoint is a fault and would be raised again on the return (a livelock).
bool instruction_breakpoint_hit(uint64_t reported, uint64_t loaded);
}  // namespace debug_registers
