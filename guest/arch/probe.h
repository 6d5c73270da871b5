#pragma once
// Kernel stores (and a load) that may fault (arch/probe.S): each returns 0 if it completed, 1 if
// the hypervisor bounced a page fault for it. Everything else faulting in the kernel panics.
#include <stdint.h>
#include "arch/trap_frame.h"

extern "C" long probe_store64(volatile uint64_t* address, uint64_t value);
extern "C" long probe_rep_stosq(volatile uint64_t* address, uint64_t value, uint64_t count);
extern "C" long probe_movnti(volatile uint64_t* address, uint64_t value);
// A load: 0 and the value in *value, or 1 if it faulted.
extern "C" long probe_load64(const volatile uint64_t* address, uint64_t* value);

namespace kernel {
// Called for a kernel-mode fault: true (and rip moved to the fixup) if it was a probe.
bool probe_fixup(TrapFrame& frame);
}  // namespace kernel
