#pragma once
// The one-shot timer (VIRQ_TIMER + HYPERVISOR_set_timer_op) and blocking until an event.
#include <stdint.h>

namespace kernel {

void timer_init();
// Sleeps until system time reaches deadline_ns, blocking the vCPU between timer events.
// Returns the number of timer events taken while sleeping.
uint64_t sleep_until(uint64_t deadline_ns);
// Boot check: sleeps ~10 ms and prints "timer: ok (<n> events)".
void timer_boot_check();

}  // namespace kernel
