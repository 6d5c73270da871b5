#include "kernel/events/timer.h"

#include "arch/xen.h"
#include "kernel/console/console.h"
#include "kernel/events/events.h"
#include "kernel/console/panic.h"
#include "kernel/events/time.h"
#include "pv-kernel-patches/pv_ops.h"

namespace kernel {
namespace {

volatile uint64_t timer_events;

void on_timer(uint32_t) { timer_events = timer_events + 1; }

}  // namespace

void timer_init() {
  // Xen starts PV vCPUs with a 10 ms periodic timer; we only want the timeouts we ask for,
  // so runs are deterministic.
  long rc = xen::vcpu_op(VCPUOP_stop_periodic_timer, 0, nullptr);
  if (rc < 0) print("timer: stop_periodic_timer: %ld\n", rc);
  events_bind_virq(VIRQ_TIMER, on_timer);
}

uint64_t sleep_until(uint64_t deadline_ns) {
  uint64_t before = timer_events;
  while (system_time_ns() < deadline_ns) {
    long rc = xen::set_timer(deadline_ns);
    if (rc < 0) panic("set_timer_op: %ld", rc);
    // Called with events masked: SCHEDOP_block unmasks and checks for pending events
    // atomically, so the timer event cannot slip in between. The upcall runs on the way
    // back; mask again afterwards.
    xen::sched_op(SCHEDOP_block, nullptr);
    pv::ops.disable_events();
  }
  return timer_events - before;
}

void timer_boot_check() {
  constexpr uint64_t kSleepNs = 10'000'000;
  uint64_t start = system_time_ns();
  uint64_t events = sleep_until(start + kSleepNs);
  // On a loaded host another event can end the last block after the deadline has passed but
  // before the timer's own event is delivered: the timer must still fire, a little later.
  const uint64_t grace_end = system_time_ns() + 1'000'000'000;
  while (events == 0 && system_time_ns() < grace_end) events += sleep_until(system_time_ns() + 1'000'000);
  uint64_t slept = system_time_ns() - start;
  if (events == 0) panic("timer: no timer event while sleeping %lu ns", slept);
  print("timer: ok (%lu events, slept %lu us)\n", events, slept / 1000);
}

}  // namespace kernel
