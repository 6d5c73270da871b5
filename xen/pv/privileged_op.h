// The privileged instructions a PV guest kernel executes as if it ran in ring 0 and that the
// hypervisor performs for it after their #GP, as Xen's emul-priv-op.c: I/O ports (pv/port_io)
// rdmsr / wrmsr of its segment bases (pv/rules/msr_emulation), cli / sti (pv/rules/interrupt_flag), mov to
// and from the control registers (pv/rules/control_registers) and debug registers (pv/rules/debug_register_moves).
// Anything else stays the guest's #GP.
#pragma once
#include "arch/x86/cpu/trap_frame.h"

struct Vcpu;

namespace privileged_op {
// true if the faulting instruction was performed (rip moved past it).
bool emulate(Vcpu& vcpu, TrapFrame& frame);
}  // namespace privileged_op
