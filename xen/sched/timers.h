// Per-vCPU singleshot and periodic timers (set_timer_op, VCPUOP_set_*_timer), each delivered
// as VIRQ_TIMER to its own vCPU (waking it; the periodic one runs only while its vCPU is on the
// CPU, as Xen's), the scheduler's time slice, and the feeding of
// the serial line while console output waits for it: each CPU's local APIC one-shot timer,
// programmed for the earliest deadline of the vCPUs whose processor it is (and, on CPU 0, the
// serial line's).
#pragma once
#include <stdint.h>

struct Vcpu;

namespace timers {
// How a vCPU timer that is due reaches its vCPU (VIRQ_TIMER, through the event channels, a
// floor above the scheduler, which say so at boot).
using EventSender = void (*)(Vcpu& vcpu, unsigned virq);
void set_event_sender(EventSender send);
void set_singleshot(Vcpu& vcpu, uint64_t deadline_ns);  // 0 cancels
void set_periodic(Vcpu& vcpu, uint64_t period_ns);      // 0 stops
// The vCPU was scheduled in: its periodic timer, stopped while it was off the CPU, runs again
// (an event if a period passed meanwhile), as Xen's periodic timer does.
void switched_in(Vcpu& vcpu);
void init();    // the local APIC timer's expiry runs expire()
void expire();  // from the timer interrupt
void reprogram();
}  // namespace timers
