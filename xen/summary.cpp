#include "summary.h"
#include "abi/xen_abi.h"
#include <xen/sched.h>
#include "arch/x86/platform/power.h"
#include "console/console.h"
#include "domain_console/console_output.h"
#include "domain/domain.h"
#include "domain/frame_audit.h"
#include "perf/perf_counters.h"
#include "domain/writable_page_tables_glue.h"
#include "hypercall/call_counts.h"
#include "sched/scheduler.h"
#include "time/clock.h"

namespace summary {
namespace {

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

const char* hypercall_name(unsigned number) {
  static const char* const names[] = {"set_trap_table",
                                      "mmu_update",
                                      "set_gdt",
                                      "stack_switch",
                                      "set_callbacks",
                                      "fpu_taskswitch",
                                      "sched_op_compat",
                                      "platform_op",
                                      "set_debugreg",
                                      "get_debugreg",
                                      "update_descriptor",
                                      "11",
                                      "memory_op",
                                      "multicall",
                                      "update_va_mapping",
                                      "set_timer_op",
                                      "event_channel_op_compat",
                                      "xen_version",
                                      "console_io",
                                      "physdev_op_compat",
                                      "grant_table_op",
                                      "vm_assist",
                                      "update_va_mapping_otherdomain",
                                      "iret",
                                      "vcpu_op",
                                      "set_segment_base",
                                      "mmuext_op",
                                      "xsm_op",
                                      "nmi_op",
                                      "sched_op",
                                      "callback_op",
                                      "xenoprof_op",
                                      "event_channel_op",
                                      "physdev_op",
                                      "hvm_op",
                                      "sysctl",
                                      "domctl",
                                      "kexec_op",
                                      "tmem_op",
                                      "argo_op",
                                      "xenpmu_op",
                                      "dm_op",
                                      "hypfs_op"};
  return number < sizeof(names) / sizeof(names[0]) ? names[number] : "unknown";
}

void print() {
  printk("Hypervisor summary after %lu ms:\n", system_clock::now_ns() / 1000000);
  for (unsigned i = 0; i < unsigned(perf::Counter::count); ++i) {
    auto counter = static_cast<perf::Counter>(i);
    printk("  %-30s %lu\n", perf::name(counter), perf::value(counter));
  }
  for (unsigned i = 0; i < hypercall::kCountedCalls; ++i)
    if (hypercall::call_count(i))
      printk("  hypercall %-20s [%2u] %6lu\n", hypercall_name(i), i, hypercall::call_count(i));
}
}  // namespace

namespace {
// sched_smp=1: which CPUs each vCPU ran on ("Domain 0 vCPUs ran on: v0 0 v1 1,2 ..."), for the
// integration tests of placement and affinity.
void report_cpus_used(const Domain& domain) {
  char line[160];
  unsigned length = 0;
  auto add = [&](char c) {
    if (length + 1 < sizeof(line)) line[length++] = c;
  };
  domain.for_each_vcpu([&](const Vcpu& vcpu) {
    add(' ');
    add('v');
    add(char('0' + vcpu.id % 10));
    char separator = ' ';
    for_each_cpu(vcpu.ran_on, [&](unsigned cpu) {
      add(separator);
      add(char('0' + cpu % 10));
      separator = ',';
    });
    if (vcpu.ran_on.empty()) {
      add(' ');
      add('-');
    }
  });
  line[length] = 0;
  printk("Domain %u vCPUs ran on:%s\n", domain.id, line);
}
}  // namespace

void init() { scheduler::set_stop_reports(domain_stopped, no_domain_left); }

void domain_stopped(Domain& domain) {
  if (domain.stop_reported) return;
  domain.stop_reported = true;
  console_output::report_dropped(domain);      // what its console limits dropped since the last report
  writable_page_tables::reattach_all(domain);  // detached tables are validated before the audit
  const char* how = domain.state == DomainState::crashed ? "crashed" : "shut down";
  printk("Domain %u %s: reason %s (%u)\n", domain.id, how, reason_name(domain.shutdown_reason), domain.shutdown_reason);
  if (domains::vcpus_on_every_cpu()) report_cpus_used(domain);
  if (writable_page_tables::on_several_cpus(domain) && domain.pt_write_mode != PageTableWriteMode::emulate)
    printk("Domain %u writable pagetables on several CPUs: %lu detaches, %lu flush calls\n", domain.id,
           __atomic_load_n(&domain.ptwr_shared_detaches, __ATOMIC_RELAXED),
           __atomic_load_n(&domain.ptwr_shared_flush_calls, __ATOMIC_RELAXED));
  if (domain.state == DomainState::crashed)
    printk("hypervisor still running after the crash of domain %u\n", domain.id);
}

void no_domain_left() {
  print();
  frame_audit::run_and_report();
  // dom0's reason, whichever domain stopped last: the exit value says how dom0 ended.
  Domain* dom0 = domains::dom0();
  unsigned exit_value = dom0 ? dom0->shutdown_reason : 0;
  printk("No domain left to run: ending the machine (exit value %u)\n", exit_value);
  power::off(uint8_t(exit_value));
}
}  // namespace summary
