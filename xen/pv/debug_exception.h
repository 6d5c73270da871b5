// #DB as Xen 4.17's do_debug takes it for a PV guest. The CPU's DR6 says what was hit; it is
// read first and reset to its default (the CPU never clears its status bits, so the next #DB
// would otherwise report this one's too).
//  - In guest context (a breakpoint of the guest's own, a single step, icebp): the status
//    goes into the vCPU's DR6 (pv/rules/debug_registers record_status: what the guest reads back)
//    and the guest gets #DB through its trap table.
//  - In hypervisor context: a guest's data breakpoint on guest memory the hypervisor reads or
//    writes for it (a hypercall argument, a bounce frame), or a #DB that a `mov %ss` / `pop
//    %ss` delayed past the next instruction into the hypervisor's entry (XSA-260: on hardware
//    the first instruction of the syscall entry, on the guest's rsp). It arrives on its own
//    stack (arch/x86/entry.S), is reported (rate-limited) and dropped: the hypervisor resumes
//    and the guest sees nothing, as on Xen. What DR6 says is guest-controlled (its status bits
//    are sticky: XSA-265), so nothing here trusts it beyond an instruction breakpoint that DR7
//    really enables, which would fire again on return and is disabled.
#pragma once
#include "arch/x86/cpu/trap_frame.h"

struct Vcpu;

namespace debug_exception {
// A #DB raised in `vcpu`'s context: its DR6 updated, ready for the guest's #DB.
void record_from_guest(Vcpu& vcpu);
// A #DB raised while the hypervisor ran (`frame` on the #DB stack): handled, never fatal.
void in_hypervisor(TrapFrame& frame);
// For selftest=syscall-entry-debug (tests only): every #DB in hypervisor context is reported,
// none suppressed by the rate limit, so a test sees each one the guest provoked.
void report_every_one();
}  // namespace debug_exception
