#pragma once
#include "mm/mmu_context.h"

namespace mm {

// The L1 entry that translates a virtual address.
struct L1Slot {
  uint64_t table_mfn = 0;
  unsigned index = 0;
};

// Walks the validated L4 at `l4_mfn` (owned by context.domain) down to the L1 entry for
// `va`. -EINVAL if `va` is non-canonical or in the hypervisor's range, if the L4 is not a
// validated L4 of the domain, or if an L4/L3/L2 entry on the way is not present.
int find_l1_slot(const MmuContext& context, uint64_t l4_mfn, uint64_t va, L1Slot* slot);

// Core of HYPERVISOR_update_va_mapping: find_l1_slot in the given address space (the
// vCPU's current kernel base), then update_table_entry on that L1 entry with `value`.
// The UVMF_* flush flags are left to the glue, which applies them only if this returns 0.
// `va_invalidated`: the glue invalidates va's translation as soon as this returns 0, before
// anything else runs (UVMF_INVLPG, UVMF_TLB_FLUSH). A writable mapping removed then leaves no
// stale translation behind when va is its only address (TlbFlushClock), so that removal does
// not make the frame's next type change flush.
int update_va_mapping(MmuContext& context, uint64_t l4_mfn, uint64_t va, uint64_t value, bool va_invalidated = false);

}  // namespace mm
