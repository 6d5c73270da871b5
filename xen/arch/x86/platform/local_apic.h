// The local APIC (xAPIC, through its page): the boot CPU's one-shot timer drives guest timers
// (VIRQ_TIMER); the IPIs that start the other CPUs and stop them.
#pragma once
#include <stdint.h>
#include "arch/x86/cpu/trap_frame.h"

namespace local_apic {
void init();                           // enable, calibrate the timer against the TSC
void arm_timer_ns(uint64_t delta_ns);  // one-shot, 0 disarms
// What the timer's expiry runs (after the EOI): the guest timers and the time slice
// (sched/timers), a floor above the APIC's, tell it so.
using TimerHandler = void (*)();
void set_timer_handler(TimerHandler handler);
void handle_timer_interrupt();
void end_of_interrupt();
uint64_t physical_base();  // where IA32_APIC_BASE put it (0 before init)
uint32_t id();             // this CPU's APIC id
void init_ap();            // an AP's own APIC, after init() on the boot CPU: enabled, timer masked
void send_init(uint32_t apic_id);
void send_startup(uint32_t apic_id, uint32_t page);  // start in real mode at page << 12
void send_to_others(uint8_t vector);                 // a fixed IPI to every CPU but this one
void send_fixed(uint32_t apic_id, uint8_t vector);   // a fixed IPI to one CPU
void send_nmi_to_others();                           // an NMI to every CPU but this one

namespace detail {
extern volatile uint32_t* registers;        // the local APIC's page, mapped by init
inline constexpr uint32_t reg_irr = 0x200;  // 8 registers of 32 bits, 16 bytes apart
}  // namespace detail

// The timer interrupt is raised but not yet taken (the hypervisor runs with interrupts off):
// a long hypercall asks this to know when to stop and let it in. Inline: a batch asks it
// between every two of its requests.
inline bool timer_interrupt_pending() {
  constexpr uint32_t vector = vectors::lapic_timer;
  return detail::registers[(detail::reg_irr + (vector / 32) * 0x10) / 4] & (1u << (vector % 32));
}
}  // namespace local_apic
