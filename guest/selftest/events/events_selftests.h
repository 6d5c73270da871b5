#pragma once
// The self-tests of what the hypervisor delivers and shares (selftest/events/): event channels
// (FIFO, IPIs), the vCPU's time and runstate areas and vcpu_info, the console.
#include "selftest/selftest.h"

namespace kernel {

void selftest_ipi(SelfTest& test);         // EVTCHNOP_bind_ipi (selftest_ipi.cpp)
void selftest_time_area(SelfTest& test);   // VCPUOP_register_vcpu_time_memory_area (selftest_time_area.cpp)
void selftest_vcpu_areas(SelfTest& test);  // runstate area and vcpu_info (selftest_vcpu_areas.cpp)
// The FIFO event-channel ABI (selftest_evtchn_fifo.cpp); the kernel stays on FIFO after it.
void selftest_evtchn_fifo(SelfTest& test);
// The console's answers to hostile text (selftest_console.cpp): forged lines and escape
// sequences, and a flood of console_io and ring notifications (a domU).
void selftest_console_filter(SelfTest& test);
void selftest_console_flood(SelfTest& test);

}  // namespace kernel
