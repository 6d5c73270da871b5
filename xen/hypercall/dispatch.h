// Hypercall dispatch: numbers and arguments (rdi, rsi, rdx, r10, r8) as Xen's 64-bit PV ABI
// defines them; the result goes to rax. Unknown numbers return -ENOSYS.
#pragma once
#include <stdint.h>
#include "arch/x86/cpu/trap_frame.h"

struct Vcpu;

namespace hypercall {
struct Arguments {
  uint64_t a[5];
};
using Handler = long (*)(Vcpu& vcpu, TrapFrame& frame, const Arguments& args);

void dispatch(Vcpu& vcpu, TrapFrame& frame);

// The handlers, grouped by file.
long set_trap_table(Vcpu&, TrapFrame&, const Arguments&);
long stack_switch(Vcpu&, TrapFrame&, const Arguments&);
long set_callbacks(Vcpu&, TrapFrame&, const Arguments&);
long callback_op(Vcpu&, TrapFrame&, const Arguments&);
long fpu_taskswitch(Vcpu&, TrapFrame&, const Arguments&);
long set_segment_base(Vcpu&, TrapFrame&, const Arguments&);
long iret(Vcpu&, TrapFrame&, const Arguments&);
long console_io(Vcpu&, TrapFrame&, const Arguments&);
long sched_op(Vcpu&, TrapFrame&, const Arguments&);
long set_timer_op(Vcpu&, TrapFrame&, const Arguments&);
long vcpu_op(Vcpu&, TrapFrame&, const Arguments&);
long xen_version(Vcpu&, TrapFrame&, const Arguments&);
long vm_assist(Vcpu&, TrapFrame&, const Arguments&);
long memory_op(Vcpu&, TrapFrame&, const Arguments&);
long event_channel_op(Vcpu&, TrapFrame&, const Arguments&);
long multicall(Vcpu&, TrapFrame&, const Arguments&);
long mmu_update(Vcpu&, TrapFrame&, const Arguments&);
long mmuext_op(Vcpu&, TrapFrame&, const Arguments&);
long update_va_mapping(Vcpu&, TrapFrame&, const Arguments&);
long update_va_mapping_otherdomain(Vcpu&, TrapFrame&, const Arguments&);
long sysctl(Vcpu&, TrapFrame&, const Arguments&);
long physdev_op(Vcpu&, TrapFrame&, const Arguments&);
}  // namespace hypercall
