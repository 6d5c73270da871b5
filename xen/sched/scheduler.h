// Round-robin scheduling of the domains' vCPUs on the boot CPU: every vCPU that is up (a
// context, not VCPUOP_down), not blocked and whose domain is alive and unpaused, in the order
// of the domain slots and then the vCPU ids (sched/run_queue). A vCPU runs until it blocks,
// yields, goes down, stops, or its time slice ends while another vCPU is runnable; with nothing runnable
// the CPU idles (sti; hlt) until an interrupt wakes something. When no domain is left, the
// machine ends. Runstate changes and switches are traced as Xen 4.17 traces them, the idle
// vCPU being d32767 (DOMID_IDLE) v0.
#pragma once
#include <stdint.h>
#include "arch/x86/cpu/trap_frame.h"

struct Domain;
struct Vcpu;

namespace scheduler {
constexpr uint64_t time_slice_ns = 10'000'000;

void start(Vcpu& first);          // `first` runs now; every other vCPU waits its turn
void schedule(TrapFrame& frame);  // before returning to a guest: switch if the current vCPU must stop
void block();                     // SCHEDOP_block: enable events, sleep unless one is pending
void yield();
void wake(Vcpu& vcpu);  // an event for a blocked vCPU
void slice_expired();   // from the timer interrupt
// The control domain paused a domain (its first pause) or unpaused it (its last unpause).
void paused(Vcpu& vcpu);
void unpaused(Vcpu& vcpu);
// A vCPU down (created without a context, destroyed, VCPUOP_down) and up (its context set
// online, VCPUOP_up): the scheduler picks only vCPUs that are up, including those of domains
// created at run time. The running vCPU going down leaves the CPU before it returns to the guest.
void vcpu_down(Vcpu& vcpu);
void vcpu_up(Vcpu& vcpu);
// VCPUOP_down of a vCPU that was up (Xen's vcpu_sleep_nosync: a blocked vCPU stays blocked in
// its runstate, a runnable one goes offline).
void vcpu_taken_down(Vcpu& vcpu);
// VCPUOP_up of a vCPU that was down (Xen's vcpu_wake).
void vcpu_brought_up(Vcpu& vcpu);
// Time the vCPU has spent running, up to now (Xen's runstate.time[RUNSTATE_running]).
uint64_t running_ns(const Vcpu& vcpu);
// When the running vCPU's slice ends, or 0 when no other vCPU waits for the CPU.
uint64_t slice_deadline_ns();

// What the machine does when a domain has stopped (once, when it leaves the CPU for good) and
// when no domain can run any more: the run's report and the end of the machine, which the top
// floor (xen/summary.cpp) installs at boot.
using DomainStopped = void (*)(Domain& domain);
typedef void (*NoDomainLeft)() __attribute__((noreturn));
void set_stop_reports(DomainStopped domain_stopped, NoDomainLeft no_domain_left);
// A domain that will not run again without leaving the CPU through here (another domain shut
// it down): reported now.
void report_stopped(Domain& domain);
}  // namespace scheduler
