// Hypercall handlers and what they share: their arguments, continuations, tracing of the calls.
// A guest's hypercall is dispatched by hypercall/guest_call.h; numbers and arguments (rdi, rsi,
// rdx, r10, r8) as Xen's 64-bit PV ABI defines them, the result in rax.
//
// Continuations (Xen's -ERESTART): a handler that loops over guest input stops when the CPU
// is wanted elsewhere (hypercall::preemption_requested), rewrites its Arguments so that the
// same hypercall with them continues where it stopped, and returns `restart`. The guest then
// re-executes its `syscall` with the rewritten registers (rip moved back over it), after the
// pending interrupt or the scheduler had its turn: no hypercall holds the CPU for long.
#pragma once
#include <stdint.h>
#include "arch/x86/platform/local_apic.h"
#include "arch/x86/cpu/trap_frame.h"

struct Vcpu;

namespace hypercall {
// A hypercall's five arguments in the ABI's order. A guest's own call hands its handler the
// frame's registers themselves (TrapFrame keeps rdi, rsi, rdx, r10, r8 in a row), so a
// continuation's rewritten arguments are already where the guest re-executes its syscall with
// them; a call inside a multicall gets a copy of its entry's. may_alias: the same words are
// the frame's named registers.
struct [[gnu::may_alias]] Arguments {
  uint64_t a[5];
};
using Handler = long (*)(Vcpu& vcpu, TrapFrame& frame, Arguments& args);

// Never returned to a guest: "re-execute me with the rewritten arguments".
inline constexpr long restart = -0x7fff'0001;

// Tracing of the guest's hypercalls (Xen's TRC_PV_HYPERCALL_V2) on or off. dispatch calls
// through a table that is switched whole: the plain handlers while tracing is off, a recording
// entry for every number while it is on. So the hypercall path has no trace site at all (the
// NOP of one would be an instruction on every hypercall).
void trace_guest_calls(bool on);
// A loop serving a guest checks this between iterations (never before the first, so every
// call makes progress): true when an interrupt waits (the local APIC timer: a guest timer or
// the end of a time slice).
inline bool preemption_requested() { return local_apic::timer_interrupt_pending(); }

// The handlers, grouped by file.
long set_trap_table(Vcpu&, TrapFrame&, Arguments&);
long stack_switch(Vcpu&, TrapFrame&, Arguments&);
long set_callbacks(Vcpu&, TrapFrame&, Arguments&);
long callback_op(Vcpu&, TrapFrame&, Arguments&);
long fpu_taskswitch(Vcpu&, TrapFrame&, Arguments&);
long set_debugreg(Vcpu&, TrapFrame&, Arguments&);
long get_debugreg(Vcpu&, TrapFrame&, Arguments&);
long set_segment_base(Vcpu&, TrapFrame&, Arguments&);
long set_gdt(Vcpu&, TrapFrame&, Arguments&);
long update_descriptor(Vcpu&, TrapFrame&, Arguments&);
long iret(Vcpu&, TrapFrame&, Arguments&);
long console_io(Vcpu&, TrapFrame&, Arguments&);
long sched_op(Vcpu&, TrapFrame&, Arguments&);
long set_timer_op(Vcpu&, TrapFrame&, Arguments&);
long vcpu_op(Vcpu&, TrapFrame&, Arguments&);
long xen_version(Vcpu&, TrapFrame&, Arguments&);
long vm_assist(Vcpu&, TrapFrame&, Arguments&);
long memory_op(Vcpu&, TrapFrame&, Arguments&);
long event_channel_op(Vcpu&, TrapFrame&, Arguments&);
long multicall(Vcpu&, TrapFrame&, Arguments&);
long mmu_update(Vcpu&, TrapFrame&, Arguments&);
long mmuext_op(Vcpu&, TrapFrame&, Arguments&);
long update_va_mapping(Vcpu&, TrapFrame&, Arguments&);
long update_va_mapping_otherdomain(Vcpu&, TrapFrame&, Arguments&);
long sysctl(Vcpu&, TrapFrame&, Arguments&);
long domctl(Vcpu&, TrapFrame&, Arguments&);
long physdev_op(Vcpu&, TrapFrame&, Arguments&);
}  // namespace hypercall
