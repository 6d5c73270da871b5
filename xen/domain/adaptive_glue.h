// The hypervisor side of ptwr=adaptive: asks the domain's AdaptivePolicy (ptwr/adaptive_policy.h)
// which path an L1 write fault takes, tells it what each reattach found, and traces every
// change of path (PTWR_ADAPTIVE, trace/EVENTS.md).
#pragma once
#include <stdint.h>

#include "domain/domain.h"
#include "perf/perf_counters.h"
#include "ptwr/adaptive_policy.h"

namespace adaptive_ptwr {
// What the guest did besides writing page tables: every hypercall (the iret back to user mode
// among them), every exception bounced to it and every system call of its user code. Two write
// faults with the same count have nothing of the guest's between them: a run. (The counters are
// the machine's; another domain running in between moves them too, which only breaks a run.)
inline uint64_t guest_activity() {
  return perf::value(perf::Counter::hypercalls) + perf::value(perf::Counter::bounced_exceptions) +
         perf::value(perf::Counter::guest_syscalls);
}

// A change of path, traced and logged (out of line: rare).
[[gnu::cold]] void switched_path(uint64_t table_mfn, ptwr::AdaptiveSwitch switched, unsigned detail);

// The policy's answer for a write fault on L1 `table_mfn` of an adaptive domain (inline: every
// write fault of such a domain asks).
inline bool policy_wants_detach(Domain& domain, uint64_t table_mfn) {
  ptwr::AdaptiveDecision decision = domain.adaptive_ptwr.on_write_fault(table_mfn, guest_activity());
  if (decision.switched != ptwr::AdaptiveSwitch::none) [[unlikely]]
    switched_path(table_mfn, decision.switched, ptwr::AdaptivePolicy::kRunLength);
  return decision.path == ptwr::AdaptivePath::detach;
}

// Whether a guest kernel's write fault on its L1 `table_mfn` tries a detach before emulation:
// always under writable, never under emulate, per table under adaptive. A detach may still be
// declined by writable pagetables' own rules; the write is then emulated.
inline bool wants_detach(Domain& domain, uint64_t table_mfn) {
  if (domain.pt_write_mode == PageTableWriteMode::writable) return true;
  return domain.pt_write_mode == PageTableWriteMode::adaptive && policy_wants_detach(domain, table_mfn);
}

// L1 `table_mfn` was reattached with `changed` entries changed (any mode: only adaptive listens).
void reattached(Domain& domain, uint64_t table_mfn, unsigned changed);
}  // namespace adaptive_ptwr
