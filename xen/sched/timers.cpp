#include "sched/timers.h"
#include "abi/xen_abi.h"
#include <xen/xen.h>
#include "arch/x86/platform/local_apic.h"
#include "console/serial.h"
#include "domain/domain.h"
#include "sched/scheduler.h"
#include "time/clock.h"

namespace timers {
namespace {
EventSender send_event;

// Deadlines are absolute ns; 0 means none.
uint64_t earlier(uint64_t a, uint64_t b) {
  if (!a) return b;
  if (!b) return a;
  return a < b ? a : b;
}

uint64_t earliest_deadline(const Vcpu& vcpu) {
  return earlier(vcpu.timer_deadline_ns, vcpu.periodic_period_ns ? vcpu.next_periodic_ns : 0);
}

// A stopped domain's timers no longer count. While console output waits for the serial line,
// the timer comes back every poll interval to feed it (console/serial).
uint64_t earliest_deadline() {
  uint64_t deadline = scheduler::slice_deadline_ns();
  if (serial::pending()) deadline = earlier(deadline, system_clock::now_ns() + serial::poll_interval_ns);
  domains::for_each([&](const Domain& domain) {
    if (domain.alive()) deadline = earlier(deadline, earliest_deadline(domain.vcpu0));
  });
  return deadline;
}

void fire_if_due(Vcpu& vcpu, uint64_t now) {
  bool fire = false;
  if (vcpu.timer_deadline_ns && now >= vcpu.timer_deadline_ns) {
    vcpu.timer_deadline_ns = 0;
    fire = true;
  }
  if (vcpu.periodic_period_ns && now >= vcpu.next_periodic_ns) {
    // Missed periods are skipped in one step (one event for all of them, as Xen's timer).
    uint64_t missed = (now - vcpu.next_periodic_ns) / vcpu.periodic_period_ns + 1;
    vcpu.next_periodic_ns += missed * vcpu.periodic_period_ns;
    fire = true;
  }
  if (fire) send_event(vcpu, VIRQ_TIMER);
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
  reprogram();
}

void set_periodic(Vcpu& vcpu, uint64_t period_ns) {
  vcpu.periodic_period_ns = period_ns;
  vcpu.next_periodic_ns = system_clock::now_ns() + period_ns;
  reprogram();
}

void init() { local_apic::set_timer_handler(expire); }

void expire() {
  serial::poll();
  uint64_t now = system_clock::now_ns();
  domains::for_each([&](Domain& domain) {
    if (domain.alive()) fire_if_due(domain.vcpu0, now);
  });
  uint64_t slice_end = scheduler::slice_deadline_ns();
  if (slice_end && now >= slice_end) scheduler::slice_expired();
  reprogram();
}
}  // namespace timers
