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
// The table's frame lock (page_refs.h) is held for the update: taken here, or by the caller of
// the _locked_ forms.
// Returns 0, or -EINVAL if the frame is not a validated table of the context's domain or the
// slot is one of the hypervisor's L4 slots, or the error of take_entry_references. Nothing
// changes on failure.
int update_table_entry(MmuContext& context, uint64_t table_mfn, unsigned index, PageTableEntry requested,
                       bool preserve_accessed_dirty);
// A validated table of the context's domain whose frame lock the caller holds (lock_table): the
// table the _locked_ forms below update. The caller knows its level from the lock it took.
struct LockedTable {
  uint64_t mfn;
  PageInfo& info;  // context.frames.info(mfn)
  PagingLevel level;
};
// The same for a caller that holds the table's frame lock, and index < 512: the hypervisor
// slots are still refused here.
int update_locked_table_entry(MmuContext& context, const LockedTable& table, unsigned index, PageTableEntry requested,
                              bool preserve_accessed_dirty);

// update_locked_table_entry_inline<true>'s answer when the entry was no longer the one expected
// (the hardware set Accessed or Dirty meanwhile): nothing was done; not an error.
inline constexpr int kEntryChanged = 1;

}  // namespace mm
