#pragma once
// The self-tests of what the hypervisor delivers and shares (selftest/events/): event channels
// (FIFO, IPIs), the vCPU's time and runstate areas and vcpu_info, the domain's vCPUs, the console.
#include "selftest/selftest.h"

namespace kernel {

void selftest_ipi(SelfTest& test);         // EVTCHNOP_bind_ipi (selftest_ipi.cpp)
void selftest_poll(SelfTest& test);        // SCHEDOP_poll (selftest_poll.cpp)
void selftest_time_area(SelfTest& test);   // VCPUOP_register_vcpu_time_memory_area (selftest_time_area.cpp)
void selftest_vcpu_areas(SelfTest& test);  // runstate area and vcpu_info (selftest_vcpu_areas.cpp)
// The FIFO event-channel ABI (selftest_evtchn_fifo.cpp); the kernel stays on FIFO after it.
void selftest_evtchn_fifo(SelfTest& test);
// The kernel on every vCPU (selftest_vcpus.cpp, selftest_vcpus_hostile.cpp): bring-up, work
// and IPIs on each, per-vCPU timers and areas, the domctl view, and the hostile VCPUOP and
// binding calls. FIFO queues per vCPU, and the last vCPU going down (selftest_vcpus_fifo.cpp).
void selftest_vcpus(SelfTest& test);
void selftest_vcpus_fifo(SelfTest& test);
void selftest_vcpus_down_last(SelfTest& test);
// Remote TLB flushes (MMUEXT_TLB_FLUSH_ALL, INVLPG_ALL) while the other vCPUs spin in the kernel
// (selftest_vcpus_flush.cpp): the workload of the per-CPU trace test's flush IPIs.
void selftest_vcpus_flush(SelfTest& test);
// The console's answers to hostile text (selftest_console.cpp): forged lines and escape
// sequences, and a flood of console_io and ring notifications (a domU).
void selftest_console_filter(SelfTest& test);
void selftest_console_flood(SelfTest& test);

}  // namespace kernel
