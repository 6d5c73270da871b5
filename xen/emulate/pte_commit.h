#pragma once
// The emulated PTE write committed as the instruction would have made it on SMP: computed from
// the entry it actually replaces, and stored by compare-and-exchange against that entry. Pure.
//
// The caller holds the table's frame lock (mm/page_refs.h), so no other update of the table can
// run; another CPU's page walk may still set the entry's Accessed or Dirty bit between the
// read and the store. The store then fails (the entry is not the one the result was computed
// from), and the instruction is executed again on the entry as it is now: an xchg returns the
// Dirty bit another CPU's write set (Linux's ptep_get_and_clear must see it, or a dirty page is
// lost), a narrower mov keeps it, and a cmpxchg (locked or not) fails as the hardware's would,
// ZF clear and the value found in the accumulator, if the guest's comparand no longer matches:
// Xen's ptwr_emulated_cmpxchg, whose exchange fails on any difference and hands the found value
// back. The hardware sets each of the two bits once, and only the lock holder clears them, so
// the loop ends after at most three tries.
#include "emulate/pte_write.h"
#include "mm/entry_update_inline.h"

namespace pte_write {

inline constexpr unsigned kMaxCommitAttempts = 4;

// Stores `result`, which the instruction computed from `old` (the entry read under the lock):
// 0, the entry update's error (nothing written), or mm::kEntryChanged when the entry is no longer
// `old` (nothing written either): the caller then calls execute_again. Precondition:
// result.status is ok and result.writes.
[[gnu::always_inline]] inline int commit(mm::MmuContext& context, const mm::LockedTable& table, unsigned index,
                                         const WriteResult& result, mm::PageTableEntry old) {
  return mm::update_locked_table_entry_inline<true>(context, table, index, mm::PageTableEntry(result.new_entry), false,
                                                    old);
}

// The attempts after the first, out of line (the entry rarely changes between the read and the
// store): each executes the instruction again on the entry as it is now and commits that.
// `result` becomes the last execution's: apply() it only when 0 is returned and its status is ok
// (a cmpxchg may have failed after all, writing nothing).
[[gnu::noinline]] inline int execute_again(mm::MmuContext& context, const mm::LockedTable& table, unsigned index,
                                           const DecodedWrite& write, const TrapFrame& registers,
                                           const SegmentBases& segments, uint64_t fault_address, WriteResult& result) {
  for (unsigned attempt = 1; attempt < kMaxCommitAttempts; ++attempt) {
    const mm::PageTableEntry old = mm::load_entry(context.frames, table.mfn, index);
    result = execute(write, registers, segments, fault_address, old.raw());
    if (result.status != Status::ok || !result.writes) return 0;
    const int rc = commit(context, table, index, result, old);
    if (rc != mm::kEntryChanged) return rc;
  }
  return mm::error(XEN_EBUSY);  // the entry kept changing under the lock: cannot happen
}

}  // namespace pte_write
