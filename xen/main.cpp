// start_xen: the boot CPU's path from the multiboot entry to the first guest instruction.
#include "arch/x86/platform/legacy_pic.h"
#include "arch/x86/platform/local_apic.h"
#include "arch/x86/cpu/cpu_tables.h"
#include "arch/x86/cpu/fpu.h"
#include "arch/x86/cpu/spinlock.h"
#include "arch/x86/platform/cross_cpu.h"
#include "mm/mm_locks.h"
#include "arch/x86/cpu/stacks.h"
#include "arch/x86/layout.h"
#include "arch/x86/platform/power.h"
#include "arch/x86/platform/smp_boot.h"
#include "boot/command_line.h"
#include "arch/x86/boot/multiboot_info.h"
#include "console/console.h"
#include "boot/boot_domains.h"
#include "domain/domain.h"
#include "domain_console/guest_console.h"
#include "event/event_channels.h"
#include "boot/domain_builder.h"
#include "emulate/instruction_decoder.h"
#include "pv/pte_emulation.h"
#include "memory/boot_memory.h"
#include "domain/debug_register_cpu.h"
#include "pv/debug_exception.h"
#include "memory/hypervisor_page_tables.h"
#include "sched/timers.h"
#include "cross_cpu_selftest.h"
#include "summary.h"
#include "time/clock.h"

const char* hypervisor_command_line = "";

namespace {
constexpr uint8_t exit_boot_failure = 0x7f;
char command_line_copy[1024];
boot::CommandLine options;

// The boot page tables map the first 4 GiB at DIRECTMAP_VIRT_START: loader structures are
// read through that window.
const void* map_physical(void*, uint64_t physical, uint64_t size) {
  constexpr uint64_t limit = 4ULL << 30;
  if (physical >= limit || size > limit - physical) return nullptr;
  return reinterpret_cast<const void*>(DIRECTMAP_VIRT_START + physical);
}

// The hypervisor's own mappings made after boot (its guarded stacks), with page-table frames
// from the boot allocator.
bool map_hypervisor_pages(uint64_t va, uint64_t mfn, uint64_t pages, uint64_t flags) {
  return hypervisor_page_tables::map(va, mfn, pages, flags, [] { return boot_memory::allocate_frame(DOMID_XEN); });
}

[[noreturn]] void boot_failure(const char* what) {
  printk("Boot failed: %s\n", what);
  power::off(exit_boot_failure);
}

// A read through an unmapped hypervisor address, a few calls deep, so the report shows a
// backtrace. noinline keeps the frames the test expects to see.
[[gnu::noinline]] uint64_t read_unmapped(volatile uint64_t* address) { return *address; }
[[gnu::noinline]] void hypervisor_fault_selftest() {
  printk("selftest: faulting inside the hypervisor on purpose\n");
  uint64_t value = read_unmapped(reinterpret_cast<volatile uint64_t*>(0xffff8123deadb000ULL));
  printk("selftest: read %lx, which is impossible\n", value);  // also keeps the call from being a tail call
}

// Recursion that never ends, on the guarded entry stack (the boot stack has no guard page):
// infinite on purpose, so GCC's warning about it is off here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winfinite-recursion"
[[gnu::noinline]] uint64_t recurse(uint64_t depth) {
  volatile uint64_t frame[64];
  frame[0] = depth;
  return recurse(depth + 1) + frame[0];
}
#pragma GCC diagnostic pop
[[noreturn, gnu::noinline]] void stack_overflow_selftest() {
  printk("selftest: overflowing the hypervisor stack on purpose\n");
  asm volatile("mov %0, %%rsp\n call *%1" ::"r"(stacks::entry_stack_top()), "r"(recurse), "D"(0) : "memory");
  __builtin_unreachable();
}

// The hardware's answer to XSA-260's `mov %ss; syscall`, made under TCG: a write breakpoint on
// the syscall entry's scratch slot raises #DB right after the entry's first instruction, on the
// guest's rsp. It stays armed until a guest arms breakpoints of its own.
extern "C" uint64_t syscall_scratch_rsp;
void syscall_entry_debug_selftest() {
  printk("selftest: a data breakpoint on the syscall entry's scratch slot: #DB on every guest syscall\n");
  debug_register_cpu::watch_hypervisor_word(uint64_t(&syscall_scratch_rsp));
  debug_exception::report_every_one();
}

static_assert(boot_memory::max_modules >= 2 * domains::max_domains, "a kernel and an initrd for every slot");
static_assert(boot::BootDomains::capacity >= domains::max_domains, "a plan for every slot");

// dom0 from the first modules, then the domUs of boot/boot_domains' convention. A domU that
// cannot be built is reported and left out; dom0 failing ends the boot.
Domain& build_boot_domains() {
  boot::BootDomains plan = boot::plan_boot_domains(boot_memory::module_count(), domains::max_domains);
  if (plan.count == 0) boot_failure("no kernel module given");
  if (boot_memory::modules_dropped())
    printk("Boot: %u modules beyond the first %u dropped (the domain table has %u slots)\n",
           boot_memory::modules_dropped(), boot_memory::max_modules, domains::max_domains);
  if (plan.ignored_modules) printk("Boot: %lu modules beyond the domain table ignored\n", plan.ignored_modules);
  BuildResult dom0 = domain_builder::build(plan.domains[0], options);
  if (!dom0.ok) boot_failure(dom0.error);
  if (options.dom0_vcpus_pin)  // Xen's dom0_vcpus_pin: vCPU n on CPU n
    dom0.domain->for_each_vcpu([](Vcpu& vcpu) {
      vcpu.hard_affinity = CpuMask::only(vcpu.id % smp_boot::online_cpus());
      vcpu.processor = vcpu.id % smp_boot::online_cpus();
      if (!domains::vcpus_on_every_cpu()) vcpu.processor = 0;
    });
  for (size_t i = 1; i < plan.count; ++i) {
    BuildResult domu = domain_builder::build(plan.domains[i], options);
    if (!domu.ok) printk("d%u not built: %s\n", plan.domains[i].id, domu.error);
  }
  return *dom0.domain;
}

// The other CPUs, parked (arch/x86/platform/smp_boot): their stacks and GDTs from the boot
// allocator, mapped as the boot CPU's guarded stacks are.
void bring_up_cpus() {
  smp_boot::Options smp;
  if (options.max_cpus && options.max_cpus < smp.max_cpus) smp.max_cpus = options.max_cpus;
  smp.ap_fault_selftest = options.selftest == boot::HypervisorSelftest::ap_fault;
  smp.bsp_fault_selftest = options.selftest == boot::HypervisorSelftest::bsp_fault;
  smp.ap_hang_selftest = options.selftest == boot::HypervisorSelftest::ap_hang;
  smp_boot::bring_up(smp, map_hypervisor_pages, [] { return boot_memory::allocate_frame(DOMID_XEN); });
}

LogLevel console_level(boot::LogLevel level) { return static_cast<LogLevel>(level); }

void read_command_line(const boot::MultibootInfo& info) {
  boot::MultibootString text;
  if (info.command_line(text) == boot::MultibootError::none && text.text) {
    uint64_t n = text.length < sizeof(command_line_copy) - 1 ? text.length : sizeof(command_line_copy) - 1;
    __builtin_memcpy(command_line_copy, text.text, n);
  }
  hypervisor_command_line = boot::skip_image_name(command_line_copy);
  boot::parse_command_line(hypervisor_command_line, sizeof(command_line_copy), options);
  console::set_level(
      console_level(options.log_level == boot::LogLevel::warning ? boot::LogLevel::info : options.log_level));
  printk("Command line: %s\n", hypervisor_command_line);
  // Each bad or unknown parameter is a warning, shown at the default log level as Xen shows
  // its 'parameter "x" has invalid value' lines; the option keeps its default.
  char line[160];
  for (size_t i = 0; i < options.diagnostic_count; ++i) {
    boot::format_diagnostic(options.diagnostics[i], line, sizeof(line));
    log_warning("Warning: %s\n", line);
  }
  if (options.dropped_diagnostics)
    log_warning("Warning: %lu more command-line problems not shown\n", options.dropped_diagnostics);
}

// A lock taken or released against the lock order (arch/x86/cpu/lock_order.h), in builds
// that check it: the machine stops with the lock and the held lock it clashed with named.
void report_lock_violation(unsigned cpu, lock_order::Violation violation, const lock_order::LockClass& lock,
                           const lock_order::LockClass* held) {
  using lock_order::level_name;
  const char* what = lock_order::describe(violation);
  switch (violation) {
    case lock_order::Violation::order:
    case lock_order::Violation::too_deep:
      if (held)
        console::panic("CPU%u: %s: '%s' (level %s) taken while holding '%s' (level %s)", cpu, what, lock.name,
                       level_name(lock.level), held->name, level_name(held->level));
      break;
    case lock_order::Violation::unlock_order:
      if (held)
        console::panic("CPU%u: %s: '%s' (level %s) released while holding '%s' (level %s), taken after it", cpu, what,
                       lock.name, level_name(lock.level), held->name, level_name(held->level));
      break;
    default: break;
  }
  console::panic("CPU%u: %s: '%s' (level %s)", cpu, what, lock.name, level_name(lock.level));
}
}  // namespace

extern "C" [[noreturn]] void start_xen(uint32_t magic, uint32_t info_physical) {
  console::init();
  printk("pvhv: a paravirtual hypervisor speaking Xen's PV ABI (x86-64)\n");
  if (magic != boot::multiboot::bootloader_magic) boot_failure("not started by a multiboot loader");
  boot::MultibootInfo info;
  if (boot::MultibootInfo::read(boot::PhysicalMemoryView{map_physical, nullptr}, info_physical, info) !=
      boot::MultibootError::none)
    boot_failure("multiboot information unreadable");
  read_command_line(info);

  spinlock::set_violation_report(report_lock_violation);
  // The PV MMU's locks (mm/mm_locks.h) checked as the spinlocks are, and their waits answering
  // cross-CPU calls (a lock holder may be waiting for this CPU's answer with its lock held).
  // (Lambdas: an extern function's address would need a GOT entry in this image.)
  mm::set_lock_hooks(
      mm::LockHooks{[](const void* lock, const lock_order::LockClass& klass) { spinlock::check_acquire(lock, klass); },
                    [](const void* lock, const lock_order::LockClass& klass) { spinlock::check_release(lock, klass); },
                    [] {
                      cross_cpu::poll();
                      __builtin_ia32_pause();
                    },
                    [](const void* lock, const lock_order::LockClass& klass) {
                      spinlock::check_acquired_without_waiting(lock, klass);
                    }});
  cpu_tables::init();
  fpu::init();
  debug_register_cpu::init();
  if (options.selftest == boot::HypervisorSelftest::hypervisor_fault) hypervisor_fault_selftest();
  if (!boot_memory::init(info)) boot_failure("memory initialisation");
  if (!stacks::guard(map_hypervisor_pages)) boot_failure("hypervisor stacks");
  if (options.selftest == boot::HypervisorSelftest::stack_overflow) stack_overflow_selftest();
  if (options.selftest == boot::HypervisorSelftest::syscall_entry_debug) syscall_entry_debug_selftest();
  system_clock::calibrate();
  legacy_pic::disable();
  local_apic::init();
  bring_up_cpus();
  // sched_smp=1: guests on every online CPU (sched/scheduler), decided before any domain exists.
  if (options.sched_smp && smp_boot::online_cpus() > 1) domains::detail::vcpus_on_every_cpu = true;
  if (options.selftest == boot::HypervisorSelftest::ipi) cross_cpu::selftest(true);
  if (options.selftest == boot::HypervisorSelftest::ipi_unlocked) cross_cpu::selftest(false);
  if (options.selftest == boot::HypervisorSelftest::lock_order) cross_cpu::lock_order_selftest(false);
  if (options.selftest == boot::HypervisorSelftest::lock_recursion) cross_cpu::lock_order_selftest(true);
  // Each floor hands the floors below it what they call up to (docs/architecture.md, "Floors"):
  // the APIC timer's expiry, the frame table's and the trace records' view of the domains, the
  // events that timers, stopping domains and the trace buffers raise, the console ring's
  // backend, the report of stopped domains.
  timers::init();
  domains::init();
  event_channels::init();
  guest_console::init();
  summary::init();
  if (!instruction_decoder::self_check()) boot_failure("instruction decoder self-check");
  if (!options.instruction_cache) pte_emulation::set_instruction_cache_enabled(false);

  boot_memory::seal_hypervisor_slots();
  Domain& dom0 = build_boot_domains();
  hypervisor_page_tables::drop_identity_map();
  domain_builder::start(dom0);
}
