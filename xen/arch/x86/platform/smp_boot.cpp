#include "arch/x86/platform/smp_boot.h"
#include "arch/x86/boot/acpi_tables.h"
#include "arch/x86/cpu/cpu_tables.h"
#include "arch/x86/cpu/fpu.h"
#include "arch/x86/cpu/per_cpu.h"
#include "arch/x86/cpu/registers.h"
#include "arch/x86/cpu/trap_frame.h"
#include "arch/x86/layout.h"
#include "arch/x86/platform/local_apic.h"
#include "console/console.h"
#include "time/clock.h"
#include "time/idle_time.h"

extern "C" char ap_trampoline_start[], ap_trampoline_end[], ap_parameters[];

namespace smp_boot {
namespace {
// What the trampoline loads (ap_trampoline.S's ap_parameters, in this order).
struct ApParameters {
  uint64_t cr0, cr3, cr4, efer, stack, entry, cpu;
};

// An AP's way up. The boot CPU sets `starting` before the startup IPIs; the AP moves it to
// `arrived` first thing (or, if the boot CPU gave up on it first, finds `abandoned` and halts:
// its stacks may be another's by then), then to `online` once its tables are loaded.
enum State : uint32_t { absent, starting, arrived, online, abandoned };
volatile uint32_t states[MAX_CPUS];
uint64_t* gdts[MAX_CPUS];
uint32_t apic_ids[MAX_CPUS];  // each started CPU's, for the IPIs that name one
uint32_t possible_count = 1;  // the CPUs the MADT lists (the boot CPU counted): Xen's nr_cpu_ids
uint32_t online_count = 1;    // the counter the boot CPU waits on; the boot CPU is online
uint32_t halted_count = 0;    // CPUs stopped by the halt IPI (or the NMI after it)
bool halted[MAX_CPUS];        // each counted once, however many stops reach it
int faulting_cpu = -1;        // selftest=ap-fault: this AP faults once `fault_now` is set
int hanging_cpu = -1;         // selftest=ap-hang: this AP arrives and stops without reporting in
volatile bool fault_now = false;

constexpr uint64_t ms = 1000000;
constexpr uint64_t init_deassert_wait_ns = 10 * ms, startup_wait_ns = 200000, arrival_timeout_ns = 100 * ms,
                   stop_timeout_ns = 100 * ms;  // host time without -icount: other threads may wait their turn

bool compare_exchange(volatile uint32_t& word, uint32_t expected, uint32_t desired) {
  return __atomic_compare_exchange_n(&word, &expected, desired, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}
uint32_t load(const uint32_t& word) { return __atomic_load_n(&word, __ATOMIC_SEQ_CST); }

void wait_ns(uint64_t ns) {
  uint64_t end = system_clock::now_ns() + ns;
  while (system_clock::now_ns() < end) asm volatile("pause");
}

// A parked CPU: interrupts on, halted until one comes (the halt IPI, a cross-CPU call, an
// event check). Its park count is odd while it halts (or is about to), even once it woke: so
// selftest=ipi can wait for it to halt and then see the event check wake it.
uint64_t park_counts[MAX_CPUS];
IdleEntry idle_entry = nullptr;  // set once by the boot CPU, read by the APs (atomics)
[[noreturn]] void park(unsigned cpu) {
  for (;;) {
    __atomic_store_n(&park_counts[cpu], park_counts[cpu] + 1, __ATOMIC_RELEASE);
    asm volatile("sti; hlt; cli" ::: "memory");
    __atomic_store_n(&park_counts[cpu], park_counts[cpu] + 1, __ATOMIC_RELEASE);
    if (IdleEntry entry = __atomic_load_n(&idle_entry, __ATOMIC_ACQUIRE)) {
      entry(cpu);
      cpu::halt_forever();
    }
  }
}

[[gnu::noinline]] uint64_t read_unmapped(volatile uint64_t* address) { return *address; }
[[gnu::noinline]] void fault_selftest(unsigned cpu) {
  printk("selftest: CPU%u faulting inside the hypervisor on purpose\n", cpu);
  uint64_t value = read_unmapped(reinterpret_cast<volatile uint64_t*>(0xffff8123deadb000ULL));
  printk("selftest: read %lx, which is impossible\n", value);
}

// The AP's first C++, on its own entry stack, with the trampoline's GDT still loaded.
[[noreturn]] void ap_start(unsigned cpu) {
  if (cpu >= MAX_CPUS || !compare_exchange(states[cpu], starting, arrived)) cpu::halt_forever();
  if (int(cpu) == hanging_cpu) cpu::halt_forever();
  cpu_tables::init_ap(cpu, gdts[cpu]);
  fpu::init();
  local_apic::init_ap();
  states[cpu] = online;
  __atomic_fetch_add(&online_count, 1, __ATOMIC_SEQ_CST);
  if (int(cpu) == faulting_cpu) {
    while (!fault_now) asm volatile("pause");
    fault_selftest(cpu);
  }
  idle_time::enter(cpu, system_clock::now_ns());  // parked: idle from now on (getcpuinfo)
  park(cpu);
}

ApParameters& parameters() {
  uint64_t offset = uint64_t(ap_parameters - ap_trampoline_start);
  return *reinterpret_cast<ApParameters*>(DIRECTMAP_VIRT_START + AP_TRAMPOLINE_PHYS + offset);
}

// The trampoline at AP_TRAMPOLINE_PHYS (through the direct map) with what every AP loads:
// the boot CPU's control registers and EFER, its page tables.
void install_trampoline() {
  __builtin_memcpy(reinterpret_cast<void*>(DIRECTMAP_VIRT_START + AP_TRAMPOLINE_PHYS), ap_trampoline_start,
                   size_t(ap_trampoline_end - ap_trampoline_start));
  constexpr uint64_t cr0_ts = 1u << 3;
  ApParameters& p = parameters();
  p.cr0 = cpu::read_cr0() & ~cr0_ts;
  p.cr3 = cpu::read_cr3();
  p.cr4 = cpu::read_cr4();
  p.efer = cpu::read_msr(cpu::msr::efer);
  p.entry = uint64_t(&ap_start);
}

void start(unsigned cpu, uint32_t apic_id, stacks::MapPages map, stacks::FrameSource frame) {
  gdts[cpu] = stacks::build_ap(cpu, map, frame);
  if (!gdts[cpu]) {
    printk("CPU%u (APIC id %u): no memory for its stacks, left out\n", cpu, apic_id);
    return;
  }
  apic_ids[cpu] = apic_id;
  ApParameters& p = parameters();
  p.stack = stacks::entry_stack_top(cpu);
  p.cpu = cpu;
  states[cpu] = starting;
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  local_apic::send_init(apic_id);
  wait_ns(init_deassert_wait_ns);
  constexpr uint32_t page = AP_TRAMPOLINE_PHYS >> 12;
  local_apic::send_startup(apic_id, page);
  wait_ns(startup_wait_ns);
  if (states[cpu] == starting) local_apic::send_startup(apic_id, page);
  uint64_t deadline = system_clock::now_ns() + arrival_timeout_ns;
  while (states[cpu] != online && system_clock::now_ns() < deadline) asm volatile("pause");
  if (states[cpu] == online) return;
  bool never_arrived = compare_exchange(states[cpu], starting, abandoned);
  local_apic::send_init(apic_id);  // back to waiting for a startup IPI, whatever it was doing
  printk("CPU%u (APIC id %u) %s within 100 ms: left out\n", cpu, apic_id,
         never_arrived ? "did not start" : "started but did not report in");
}

// The console's stop at a panic: the halt IPI to every other CPU, and a short wait for them.
// A CPU in the hypervisor runs with interrupts off and takes the fixed vector only once it
// enables them (in a guest, or parked): what is still running after a short wait gets an NMI,
// which the NMI handler turns into the same stop while a panic is on (pv/traps).
bool wait_for_halted(uint32_t others) {
  uint64_t deadline = system_clock::now_ns() + stop_timeout_ns;
  while (load(halted_count) < others && system_clock::now_ns() < deadline) asm volatile("pause");
  return load(halted_count) >= others;
}

void stop_other_cpus() {
  uint32_t others = load(online_count) - 1;
  if (others == 0) return;
  local_apic::send_to_others(uint8_t(vectors::halt_cpu));
  if (wait_for_halted(others)) return;
  local_apic::send_nmi_to_others();
  if (wait_for_halted(others)) return;
  uint32_t stopped = load(halted_count);
  printk("%u of %u other CPUs did not stop\n", others - stopped, others);
}

const void* map_firmware(void*, uint64_t physical, uint64_t size) {
  constexpr uint64_t limit = 4ULL << 30;  // the boot direct map's window
  if (physical >= limit || size > limit - physical) return nullptr;
  return reinterpret_cast<const void*>(DIRECTMAP_VIRT_START + physical);
}

void report(const boot::acpi::CpuList& list, boot::acpi::AcpiError error) {
  using boot::acpi::AcpiError;
  if (error != AcpiError::none) printk("ACPI: %s: the boot CPU only\n", boot::acpi::describe(error));
  if (list.beyond_limit)
    printk("ACPI: %u more enabled CPUs than the hypervisor's %u: ignored\n", list.beyond_limit, MAX_CPUS);
  if (list.duplicates) printk("ACPI: %u MADT entries repeat an APIC id: ignored\n", list.duplicates);
  if (list.unreachable) printk("ACPI: %u CPUs with an APIC id above 254: ignored\n", list.unreachable);
  if (error == AcpiError::none && !list.boot_cpu_listed)
    printk("ACPI: the boot CPU (APIC id %u) is not in the MADT\n", list.apic_ids[0]);
}
}  // namespace

void bring_up(const Options& options, stacks::MapPages map, stacks::FrameSource frame) {
  boot::acpi::CpuList list;
  boot::acpi::AcpiError error =
      boot::acpi::discover_cpus(boot::PhysicalMemoryView{map_firmware, nullptr}, local_apic::id(), list);
  report(list, error);
  unsigned wanted = list.count < options.max_cpus ? list.count : options.max_cpus;
  // Every CPU listed is present with its APIC id, started or not (maxcpus=), as Xen's
  // nr_cpu_ids and present map count them.
  for (unsigned cpu = 1; cpu < list.count && cpu < MAX_CPUS; ++cpu) apic_ids[cpu] = list.apic_ids[cpu];
  possible_count = list.count > 1 ? (list.count < MAX_CPUS ? list.count : MAX_CPUS) : 1;
  apic_ids[0] = local_apic::id();
  states[0] = online;
  if (wanted > 1) {
    install_trampoline();
    if (options.ap_fault_selftest) faulting_cpu = int(wanted - 1);
    if (options.ap_hang_selftest) hanging_cpu = int(wanted - 1);
    for (unsigned cpu = 1; cpu < wanted; ++cpu) start(cpu, list.apic_ids[cpu], map, frame);
    console::set_stop_other_cpus(stop_other_cpus);
  }
  printk("Brought up %u CPUs\n", load(online_count));
  if (options.bsp_fault_selftest) fault_selftest(0);  // the parked APs must stop before the report
  if (options.ap_fault_selftest) {
    if (faulting_cpu < 0 || states[faulting_cpu] != online) console::panic("selftest=ap-fault needs a second CPU");
    fault_now = true;
    // The boot CPU stays in the hypervisor with interrupts off, as it would be in a hypercall:
    // only the NMI after the halt IPI stops it.
    for (;;) asm volatile("pause");
  }
}

void set_idle_entry(IdleEntry entry) { __atomic_store_n(&idle_entry, entry, __ATOMIC_RELEASE); }

unsigned online_cpus() { return load(online_count); }
unsigned possible_cpus() { return possible_count; }

CpuMask online_mask() {
  CpuMask mask = CpuMask::only(0);
  for (unsigned cpu = 1; cpu < MAX_CPUS; ++cpu)
    if (states[cpu] == online) mask.add(cpu);
  return mask;
}

uint32_t apic_id_of(unsigned cpu) { return cpu < MAX_CPUS ? apic_ids[cpu] : 0; }

uint64_t park_count(unsigned cpu) { return cpu < MAX_CPUS ? __atomic_load_n(&park_counts[cpu], __ATOMIC_ACQUIRE) : 0; }

void halt_this_cpu() {
  if (!__atomic_exchange_n(&halted[per_cpu::this_cpu()], true, __ATOMIC_SEQ_CST))
    __atomic_fetch_add(&halted_count, 1, __ATOMIC_SEQ_CST);
  cpu::halt_forever();
}
}  // namespace smp_boot
