// Whether a return to the guest must enter the scheduler. Inline: every trap and hypercall
// asks before it returns, and nearly always the answer is no.
#pragma once
#include "arch/x86/cpu/per_cpu.h"
#include "arch/x86/layout.h"
#include "domain/domain.h"

namespace scheduler {
// runnable() for the vCPU on this CPU, which is never paused without a reschedule request:
// another domain pausing it asks the vCPU's CPU to pick again. Checked before every return to
// a guest, so it leaves the pause count alone.
inline bool may_keep_cpu(const Vcpu& running) { return running.domain->alive() && !running.blocked; }

// schedule() would leave the running vCPU where it is.
inline bool keeps_cpu(const Vcpu& running) { return may_keep_cpu(running) && !running.reschedule_requested; }
}  // namespace scheduler
