#include "hypervisor/summary.h"
#include "mm/xen_abi.h"
#include <xen/sched.h>
#include "arch/x86/power.h"
#include "console/console.h"
#include "domain/domain.h"
#include "time/clock.h"

namespace summary {
namespace {
uint64_t counters[unsigned(Counter::count)];
uint64_t hypercall_counts[64];
const char* const counter_names[] = {"hypercalls", "exceptions bounced to guests", "event upcalls",
                                     "guest page faults"};

const char* reason_name(unsigned reason) {
  switch (reason) {
    case SHUTDOWN_poweroff: return "poweroff";
    case SHUTDOWN_reboot: return "reboot";
    case SHUTDOWN_suspend: return "suspend";
    case SHUTDOWN_crash: return "crash";
    case SHUTDOWN_watchdog: return "watchdog";
    default: return "unknown";
  }
}

void print() {
  printk("Hypervisor summary after %lu ms:\n", system_clock::now_ns() / 1000000);
  for (unsigned i = 0; i < unsigned(Counter::count); ++i) printk("  %-30s %lu\n", counter_names[i], counters[i]);
  for (unsigned i = 0; i < 64; ++i)
    if (hypercall_counts[i]) printk("  hypercall %-2u %25s %lu\n", i, "", hypercall_counts[i]);
}
}  // namespace

void add(Counter counter, uint64_t n) { counters[unsigned(counter)] += n; }
void count_hypercall(unsigned number) {
  add(Counter::hypercalls);
  if (number < 64) ++hypercall_counts[number];
}

void no_domain_left(const Domain& last) {
  const char* how = last.state == DomainState::crashed ? "crashed" : "shut down";
  printk("Domain %u %s: reason %s (%u)\n", last.id, how, reason_name(last.shutdown_reason), last.shutdown_reason);
  if (last.state == DomainState::crashed) printk("hypervisor still running after the crash of domain %u\n", last.id);
  print();
  printk("No domain left to run: ending the machine (exit value %u)\n", last.shutdown_reason);
  power::off(uint8_t(last.shutdown_reason));
}
}  // namespace summary
