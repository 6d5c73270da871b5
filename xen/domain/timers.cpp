#include "domain/timers.h"
#include "mm/xen_abi.h"
#include <xen/xen.h>
#include "arch/x86/apic/local_apic.h"
#include "domain/domain.h"
#include "domain/event_channels.h"
#include "time/clock.h"

namespace timers {
namespace {
uint64_t next_periodic_ns = 0;

uint64_t earliest_deadline(const Vcpu& vcpu) {
  uint64_t deadline = vcpu.timer_deadline_ns;
  if (vcpu.periodic_period_ns && (!deadline || next_periodic_ns < deadline)) deadline = next_periodic_ns;
  return deadline;
}
}  // namespace

void reprogram() {
  Vcpu* vcpu = domains::current();
  uint64_t deadline = vcpu ? earliest_deadline(*vcpu) : 0;
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
  next_periodic_ns = system_clock::now_ns() + period_ns;
  reprogram();
}

void expire() {
  Vcpu* vcpu = domains::current();
  if (!vcpu) return;
  uint64_t now = system_clock::now_ns();
  bool fire = false;
  if (vcpu->timer_deadline_ns && now >= vcpu->timer_deadline_ns) {
    vcpu->timer_deadline_ns = 0;
    fire = true;
  }
  if (vcpu->periodic_period_ns && now >= next_periodic_ns) {
    while (next_periodic_ns <= now) next_periodic_ns += vcpu->periodic_period_ns;
    fire = true;
  }
  if (fire) event_channels::send_virq(*vcpu, VIRQ_TIMER);
  reprogram();
}
}  // namespace timers
