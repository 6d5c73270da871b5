#pragma once
#include "mm/mmu_context.h"

namespace mm {

// The one way a guest changes an entry of a validated page table, shared by mmu_update,
// update_va_mapping, the emulated write and the writable-pagetable reattach (entry_update_inline.h).
// Replaces entry `index` of the table at `table_mfn` by the guest's `requested` value:
// validates it, takes the references the new entry holds, writes the adjusted entry
// (adjust_guest_entry) and releases what the old entry held. A change of harmless flags only
// (is_harmless_change) is written without touching counts. With `preserve_accessed_dirty`
// the A/D bits currently in the entry are kept (MMU_PT_UPDATE_PRESERVE_AD).
// Returns 0, or -EINVAL if the frame is not a validated table or the slot is one of the
// hypervisor's L4 slots, or the error of take_entry_references. Nothing changes on failure.
int update_table_entry(MmuContext& context, uint64_t table_mfn, unsigned index, PageTableEntry requested,
                       bool preserve_accessed_dirty);
// The same for a caller that has just found the frame a validated table itself
// (`table` is context.frames.info(table_mfn), is_validated_table()) and index < 512: the
// hypervisor slots are still refused here.
int update_validated_table_entry(MmuContext& context, uint64_t table_mfn, PageInfo& table, unsigned index,
                                 PageTableEntry requested, bool preserve_accessed_dirty);

}  // namespace mm
