// Whether a return to the guest must enter the scheduler. Inline: every trap and hypercall
// asks before it returns, and nearly always the answer is no.
#pragma once
#include "domain/domain.h"

namespace scheduler {
namespace detail {
extern bool reschedule_requested;  // a yield, a slice that ended, a pause: pick again
}

// runnable() for the vCPU on the CPU, which is never paused: only another domain can pause it,
// and with one CPU that domain holds the CPU while it does. Checked before every return to a
// guest, so it leaves the pause count alone.
inline bool may_keep_cpu(const Vcpu& running) { return running.domain->alive() && !running.blocked; }

// schedule() would leave the running vCPU where it is.
inline bool keeps_cpu(const Vcpu& running) { return may_keep_cpu(running) && !detail::reschedule_requested; }
}  // namespace scheduler
