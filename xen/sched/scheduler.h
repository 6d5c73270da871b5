// Round-robin scheduling of the domains' vCPUs, on each CPU over its own run queue (with
// sched_smp=0 every vCPU runs on the boot CPU; sched_smp=1 places them on every online CPU,
// sched/placement has the rules; the hypervisor lock, sched/hypervisor_lock, serialises the
// hypervisor's work). Every vCPU that is up (a
// context, not VCPUOP_down), not blocked and whose domain is alive and unpaused, in the order
// of the domain slots and then the vCPU ids (sched/run_queue). A vCPU runs until it blocks,
// yields, goes down, stops, or its time slice ends while another vCPU is runnable; with nothing runnable
// the CPU idles (sti; hlt) until an interrupt wakes something. When no domain is left, the
// machine ends. Runstate changes and switches are traced as Xen 4.17 traces them, the idle
// vCPU of CPU n being d32767 (DOMID_IDLE) vn.
#pragma once
#include <stdint.h>
#include "arch/x86/cpu/cpu_mask.h"
#include "arch/x86/cpu/trap_frame.h"

struct Domain;
struct Vcpu;

namespace scheduler {
constexpr uint64_t time_slice_ns = 10'000'000;

void start(Vcpu& first);  // `first` runs now; every other vCPU waits its turn
// sched_smp=1, an AP joining the scheduler (smp_boot's idle entry): idles until a vCPU is
// placed on it or it can pull one, then loads it into `frame` (the guest frame at the top of
// this CPU's entry stack), holding the hypervisor lock, which the entry to the guest releases.
Vcpu& first_on_this_cpu(TrapFrame& frame);
// The event-check IPI reached this CPU from a guest (under the hypervisor lock): its timer may
// have to change (a vCPU placed here, a vCPU's timer set from another CPU).
void event_check_arrived();
// Whether the vCPU is on a CPU now (Xen's is_running).
bool on_cpu(const Vcpu& vcpu);
// Xen's vcpu_sleep_sync over a domain: returns once no vCPU of it but the caller's own is on a
// CPU. For a pause, a destroy, anything that relies on the domain being off every CPU; the
// caller made its vCPUs not runnable first. The hypervisor lock is let go while it waits.
void wait_until_off_cpu(const Domain& domain);
// Xen's vcpu_set_hard_affinity: a vCPU on a CPU its new affinity excludes moves at its next
// schedule, a waiting one at once.
void set_hard_affinity(Vcpu& vcpu, CpuMask cpus);
void schedule(TrapFrame& frame);  // before returning to a guest: switch if the current vCPU must stop
void block();                     // SCHEDOP_block: enable events, sleep unless one is pending
void poll_block(Vcpu& vcpu);      // SCHEDOP_poll: sleep with events as they are (hypercall/sched_ops.cpp)
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
