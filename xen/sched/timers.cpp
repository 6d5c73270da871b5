#include "sched/timers.h"
#include "abi/xen_abi.h"
#include <xen/xen.h>
#include "arch/x86/platform/local_apic.h"
#include "console/serial.h"
#include "domain/domain.h"
#include "sched/scheduler.h"
#include "time/clock.h"
#include "arch/x86/cpu/per_cpu.h"
#include "arch/x86/platform/cross_cpu.h"

namespace timers {
namespace {
EventSender send_event;

// Deadlines are absolute ns; 0 means none.
uint64_t earlier(uint64_t a, uint64_t b) {
  if (!a) return b;
  if (!b) return a;
  return a < b ? a : b;
}

// A vCPU's singleshot timer runs whether it is on the CPU or not (it wakes a blocked vCPU);
// its periodic timer only while it runs (Xen stops it when the vCPU is descheduled and looks
// at it again when the vCPU is scheduled in: periodic_work).
uint64_t earliest_deadline(const Vcpu& vcpu, const Vcpu* running) {
  return earlier(earlier(vcpu.timer_deadline_ns, vcpu.polling ? vcpu.poll_deadline_ns : 0),
                 &vcpu == running && vcpu.periodic_period_ns ? vcpu.next_periodic_ns : 0);
}

// Xen's vcpu_periodic_timer_work: an event when a period has passed since the last one, and
// the next one a period after the last.
void periodic_work(Vcpu& vcpu, uint64_t now) {
  if (!vcpu.periodic_period_ns) return;
  if (now >= vcpu.last_periodic_ns + vcpu.periodic_period_ns) {
    vcpu.last_periodic_ns = now;
    send_event(vcpu, VIRQ_TIMER);
  }
  vcpu.next_periodic_ns = vcpu.last_periodic_ns + vcpu.periodic_period_ns;
}

// A stopped domain's timers no longer count. While console output waits for the serial line,
// the timer comes back every poll interval to feed it (console/serial; CPU 0's job). Each CPU's
// timer serves the vCPUs whose processor it is (all of them on CPU 0 with sched_smp=0): a vCPU
// that moves takes its timers along, its new CPU told by an event check.
uint64_t earliest_deadline() {
  const unsigned cpu = domains::scheduling_cpu();
  uint64_t deadline = scheduler::slice_deadline_ns();
  if (cpu == 0 && serial::pending()) deadline = earlier(deadline, system_clock::now_ns() + serial::poll_interval_ns);
  const Vcpu* running = domains::current();
  domains::for_each([&](const Domain& domain) {
    if (domain.alive())
      domain.for_each_vcpu([&](const Vcpu& vcpu) {
        if (vcpu.processor == cpu) deadline = earlier(deadline, earliest_deadline(vcpu, running));
      });
  });
  return deadline;
}

// A timer of a vCPU on another CPU changed: that CPU reprograms (scheduler::event_check_arrived).
void tell_its_cpu(const Vcpu& vcpu) {
  if (domains::vcpus_on_every_cpu() && vcpu.processor != per_cpu::this_cpu())
    cross_cpu::send_event_check(CpuMask::only(vcpu.processor));
}

void fire_if_due(Vcpu& vcpu, uint64_t now, const Vcpu* running) {
  if (vcpu.timer_deadline_ns && now >= vcpu.timer_deadline_ns) {
    vcpu.timer_deadline_ns = 0;
    send_event(vcpu, VIRQ_TIMER);
  }
  // SCHEDOP_poll's timeout (Xen's poll_timer_fn): a vCPU still polling wakes, with no event.
  if (vcpu.polling && vcpu.poll_deadline_ns && now >= vcpu.poll_deadline_ns) {
    vcpu.end_poll();
    scheduler::wake(vcpu);
  }
  // Missed periods give one event for all of them, as Xen's timer.
  if (&vcpu == running && vcpu.periodic_period_ns && now >= vcpu.next_periodic_ns) periodic_work(vcpu, now);
}
}  // namespace

void set_event_sender(EventSender send) { send_event = send; }

void reprogram() {
  uint64_t deadline = earliest_deadline();
  if (!deadline) {
    local_apic::arm_timer_ns(0);
    return;
  }
  uint64_t now = system_clock::now_ns();
  local_apic::arm_timer_ns(deadline > now ? deadline - now : 1);
}

void set_singleshot(Vcpu& vcpu, uint64_t deadline_ns) {
  vcpu.timer_deadline_ns = deadline_ns;
  tell_its_cpu(vcpu);
  reprogram();
}

// Xen's vcpu_set_periodic_timer: a period already passed since the last event (or none yet)
// sends one at once, whichever vCPU sets it.
void set_periodic(Vcpu& vcpu, uint64_t period_ns) {
  vcpu.periodic_period_ns = period_ns;
  periodic_work(vcpu, system_clock::now_ns());
  tell_its_cpu(vcpu);
  reprogram();
}

void switched_in(Vcpu& vcpu) {
  if (vcpu.periodic_period_ns) [[unlikely]]
    periodic_work(vcpu, system_clock::now_ns());
}

void init() { local_apic::set_timer_handler(expire); }

void expire() {
  const unsigned cpu = domains::scheduling_cpu();
  if (cpu == 0) serial::poll();
  uint64_t now = system_clock::now_ns();
  const Vcpu* running = domains::current();
  domains::for_each([&](Domain& domain) {
    if (domain.alive())
      domain.for_each_vcpu([&](Vcpu& vcpu) {
        if (vcpu.processor == cpu) fire_if_due(vcpu, now, running);
      });
  });
  uint64_t slice_end = scheduler::slice_deadline_ns();
  if (slice_end && now >= slice_end) scheduler::slice_expired();
  reprogram();
}
}  // namespace timers
