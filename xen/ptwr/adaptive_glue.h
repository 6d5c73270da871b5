// The hypervisor side of ptwr=adaptive: asks the domain's AdaptivePolicy (ptwr/adaptive_policy.h)
// which path an L1 write fault takes, tells it what each reattach found, and traces every
// change of path (PTWR_ADAPTIVE, trace/EVENTS.md).
#pragma once
#include <stdint.h>

#include "domain/domain.h"

namespace adaptive_ptwr {
// Out of line: the policy's answer for a write fault on L1 `table_mfn` of an adaptive domain.
bool policy_wants_detach(Domain& domain, uint64_t table_mfn);

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
