#include "domain/scheduler.h"
#include "arch/x86/cpu/registers.h"
#include "domain/domain.h"
#include "domain/timers.h"
#include "hypervisor/summary.h"

namespace scheduler {
namespace {
void idle_until_interrupt() {
  timers::reprogram();
  asm volatile("sti; hlt; cli" ::: "memory");
}
}  // namespace

void run_until_runnable(TrapFrame&) {
  Vcpu* vcpu = domains::current();
  for (;;) {
    if (!vcpu->domain->alive()) summary::no_domain_left(*vcpu->domain);
    if (!vcpu->blocked) return;
    idle_until_interrupt();
  }
}

void block() {
  Vcpu* vcpu = domains::current();
  vcpu_info_t* info = vcpu->info();
  info->evtchn_upcall_mask = 0;
  if (!info->evtchn_upcall_pending) vcpu->blocked = true;
}

void yield() {}  // a single vCPU: nothing else to run
}  // namespace scheduler
