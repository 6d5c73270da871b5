// The boot CPU's local APIC: its one-shot timer drives guest timers (VIRQ_TIMER).
#pragma once
#include <stdint.h>

namespace local_apic {
void init();                              // enable, calibrate the timer against the TSC
void arm_timer_ns(uint64_t delta_ns);     // one-shot, 0 disarms
void handle_timer_interrupt();
void end_of_interrupt();
// The timer interrupt is raised but not yet taken (the hypervisor runs with interrupts off):
// a long hypercall asks this to know when to stop and let it in.
bool timer_interrupt_pending();
uint64_t physical_base();                 // where IA32_APIC_BASE put it (0 before init)
}  // namespace local_apic
