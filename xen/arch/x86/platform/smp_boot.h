// The other CPUs: found in the firmware's ACPI tables (arch/x86/boot/acpi_tables), started
// with INIT-SIPI-SIPI through a real-mode trampoline (arch/x86/boot/ap_trampoline.S), each on
// its own stacks, GDT and TSS, then parked: `sti; hlt`, answering the halt IPI a panic sends
// (and the NMI that follows it for a CPU with interrupts off), the cross-CPU calls and the
// event check (cross_cpu.h). With sched_smp=1 a parked AP leaves its park for the scheduler
// once the boot CPU gives the idle entry (set_idle_entry).
#pragma once
#include <stdint.h>
#include "arch/x86/cpu/cpu_mask.h"
#include "arch/x86/cpu/stacks.h"
#include "arch/x86/layout.h"

namespace smp_boot {
struct Options {
  unsigned max_cpus = MAX_CPUS;     // maxcpus=: at most this many, the boot CPU counted
  bool ap_fault_selftest = false;   // selftest=ap-fault: the last AP faults once all are up
  bool bsp_fault_selftest = false;  // selftest=bsp-fault: the boot CPU faults once all are up
  bool ap_hang_selftest = false;    // selftest=ap-hang: the last AP stops before it reports in
};

// Starts the CPUs the MADT lists (the boot CPU counted, at most Options::max_cpus and
// MAX_CPUS), each AP's stacks and GDT mapped with `map` from frames of `frame`; an AP that
// does not report in within 100 ms is reported and left out. Prints Xen's "Brought up N CPUs".
// After the local APIC and the clock, before the low-memory identity map is dropped (the
// trampoline runs from it).
void bring_up(const Options& options, stacks::MapPages map, stacks::FrameSource frame);
unsigned online_cpus();
// The CPUs the MADT lists as enabled (the boot CPU counted, at most MAX_CPUS), online or not
// (maxcpus= leaves some down): Xen's nr_cpu_ids and present CPUs, physinfo's max_cpu_id + 1.
unsigned possible_cpus();
CpuMask online_mask();              // the CPUs that reported in (the boot CPU always)
uint32_t apic_id_of(unsigned cpu);  // a listed CPU's local APIC id (possible_cpus())
// A parked AP's halts and wake-ups, counted: odd while it halts (or is about to), even once
// it woke (selftest=ipi).
uint64_t park_count(unsigned cpu);
// What a parked AP runs when it next wakes, for good (the scheduler's idle loop, which a floor
// above gives at the end of boot: sched_smp=1); the boot CPU then sends it an event check.
using IdleEntry = void (*)(unsigned cpu);
void set_idle_entry(IdleEntry entry);

// The halt IPI's handler (vectors::halt_cpu), and the NMI's while another CPU panics: this CPU
// stops for good.
[[noreturn]] void halt_this_cpu();
}  // namespace smp_boot
