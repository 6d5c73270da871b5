// The last stop before iretq to a guest: deliver pending events, or idle if the vCPU blocked.
// Inline, with no frame of its own: every trap and hypercall asks before it returns, and nearly
// always the vCPU keeps the CPU with no event to take (the scheduler and the upcall loop are
// then a tail call).
#pragma once
#include "arch/x86/cpu/trap_frame.h"
#include "domain/domain.h"
#include "sched/schedule_check.h"

namespace pv {
namespace detail {
// The scheduler, then the event upcall of whichever vCPU it left on the CPU (if it takes one).
[[gnu::noinline]] void schedule_and_deliver_events(TrapFrame& frame);
}  // namespace detail

inline bool takes_upcall(const Vcpu& vcpu) {
  const vcpu_info_t* info = vcpu.info();
  return info->evtchn_upcall_pending && !info->evtchn_upcall_mask;
}

// `vcpu`: the current vCPU, when the caller has it already.
inline void before_return_to_guest(const Vcpu& vcpu, TrapFrame& frame) {
  if (scheduler::keeps_cpu(vcpu) && !takes_upcall(vcpu)) [[likely]]
    return;
  detail::schedule_and_deliver_events(frame);
}
inline void before_return_to_guest(TrapFrame& frame) { before_return_to_guest(*domains::current(), frame); }
}  // namespace pv
