// A PV guest's #UD, as Xen 4.17's pv/emul-inv-op.c takes it: the forced-emulation prefix
// before a cpuid (pv/rules/forced_emulation) is answered with the guest's CPUID policy
// (pv/rules/cpuid_policy); bytes that run into an unreadable page are the guest's #PF there; any
// other #UD is the guest's.
#pragma once
#include "arch/x86/cpu/trap_frame.h"

struct Vcpu;

namespace invalid_op {
// true if the #UD was dealt with (CPUID emulated, or a page fault raised instead).
bool emulate(Vcpu& vcpu, TrapFrame& frame);
// The vCPU's CPUID policy, as a forced-emulation CPUID from its kernel reads it.
uint32_t guest_cpuid_register(const Vcpu& vcpu, uint32_t leaf, uint32_t subleaf, unsigned index);
}  // namespace invalid_op
