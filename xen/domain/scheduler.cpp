#include "domain/scheduler.h"
#include "arch/x86/cpu/registers.h"
#include "domain/domain.h"
#include "domain/timers.h"
#include "hypervisor/summary.h"
#include "trace/format/events.h"
#include "tracing/trace_buffers.h"

namespace scheduler {
namespace {
// Xen's runstates and record (TRC_SCHED_RUNSTATE_CHANGE, one word: vcpu | domain << 16).
constexpr unsigned runstate_running = 0, runstate_runnable = 1, runstate_blocked = 2;

void trace_runstate(const Vcpu& vcpu, unsigned from, unsigned to) {
  trace::event(trace::events::sched_runstate_change(from, to), uint32_t(vcpu.id) | (uint32_t(vcpu.domain->id) << 16));
}

void idle_until_interrupt() {
  timers::reprogram();
  asm volatile("sti; hlt; cli" ::: "memory");
}
}  // namespace

void run_until_runnable(TrapFrame&) {
  Vcpu* vcpu = domains::current();
  bool waited = false;
  for (;;) {
    if (!vcpu->domain->alive()) summary::no_domain_left(*vcpu->domain);
    if (!vcpu->blocked) break;
    waited = true;
    idle_until_interrupt();
  }
  if (waited) {  // woken by an event: runnable, and at once running again (one vCPU)
    trace_runstate(*vcpu, runstate_blocked, runstate_runnable);
    trace_runstate(*vcpu, runstate_runnable, runstate_running);
  }
}

void block() {
  Vcpu* vcpu = domains::current();
  vcpu_info_t* info = vcpu->info();
  info->evtchn_upcall_mask = 0;
  if (!info->evtchn_upcall_pending) {
    vcpu->blocked = true;
    trace_runstate(*vcpu, runstate_running, runstate_blocked);
  }
}

void yield() {}  // a single vCPU: nothing else to run
}  // namespace scheduler
