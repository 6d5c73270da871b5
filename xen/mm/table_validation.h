#pragma once
#include "mm/entry_rules.h"
#include "mm/mmu_context.h"

namespace mm {

// Whether slot `index` of a table at `level` is the guest's (every slot except the
// hypervisor's L4 slots 256..271).
constexpr bool is_guest_slot(PagingLevel level, unsigned index) {
  return level != PagingLevel::L4 || is_guest_l4_slot(index);
}

// Checks every present entry in the guest slots of the table at `mfn` and takes the
// references each holds. On success the stored entries are rewritten in their adjusted form
// (adjust_guest_entry) and, for an L4, the hypervisor slots are filled in. On failure the
// references taken so far are released, this table's memory is untouched and the error of
// the first bad entry is returned. (Lower tables that validated before the failure keep
// their adjusted entries: adjusting only adds User/Accessed/marker bits and is idempotent.)
int validate_table(MmuContext& context, uint64_t mfn, PagingLevel level);

// Releases the references held by every present entry in the guest slots of the table.
void release_table_references(FrameTable& frames, uint64_t mfn, PagingLevel level);

}  // namespace mm
