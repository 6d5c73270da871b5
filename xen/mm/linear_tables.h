#pragma once
// Linear (recursive) page tables, as Xen 4.17 allows them to 64-bit PV guests (its
// pv-linear-pt option, on by default: get_l{2,3,4}_linear_pagetable and the linear counts of
// XSA-240). An L2, L3 or L4 entry whose target cannot be taken as a table of the next lower
// level (-EINVAL) may instead link a table of its own level:
//  - only read-only: a writable one would give the guest write access to its tables (-EINVAL;
//    so an update that flips RW is never a fast-path change above L1, XSA-182);
//  - to the table itself (a self-map): it holds no reference at all, so that a table can map
//    itself and still be validated, and torn down when its last other holder lets go;
//  - to another table of the same owner that is already a validated table of that level: a
//    general and a type reference on it, as a normal entry holds (never a validation, which
//    could recurse into the table being validated);
//  - one level of linearity only (XSA-240): a table holding linear entries to other tables
//    may not be the target of one, and a target may not hold any; each count stops at Xen's
//    limit (32767). The counts are PageInfo::linear_entries / linear_uses, at most one of them
//    nonzero. So teardown recursion stays bounded, and no cycle of references can form.
// A linear entry is not a link of TableLinks: through it the hardware walks its target one
// level lower, so the target's entries become the leaves of read-only mappings. An L1 table is
// still walked as a table only through normal L2 entries (a linear entry never targets an L1),
// which is what the writable-pagetable path relies on.
#include "mm/mmu_context.h"

namespace mm {

inline constexpr uint16_t kMaxLinearCount = 0x7fff;  // Xen's linear_pt_count is a 16-bit signed count

// The normal references of a present L2-L4 entry of the table at `table_mfn` (owned by
// `table_owner`) were refused with -EINVAL: takes the entry as a linear one if the rules
// above allow it (true: it holds what it needs), else false with every count unchanged.
bool take_linear_references(MmuContext& context, PagingLevel level, PageTableEntry entry, uint64_t table_mfn,
                            domid_t table_owner);

// Whether a present L2-L4 entry of the table at `table_mfn` (whose references are held) is a
// linear one: its target is the table itself, or a table of the same level that linear entries
// link (linear_uses).
bool is_linear_entry(const FrameTable& frames, PagingLevel level, PageTableEntry entry, uint64_t table_mfn);

// Releases what take_linear_references took for the same entry.
void release_linear_references(FrameTable& frames, PageTableEntry entry, uint64_t table_mfn);

}  // namespace mm
