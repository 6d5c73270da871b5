#pragma once
// update_locked_table_entry's body, inline where it runs per entry: mmu_update's batch loop,
// the emulated write and the writable-pagetable reattach (the call, six arguments and the
// callee's saved registers, was a fifth of a batched entry's cost). update_va_mapping and the
// rest call the out-of-line update_table_entry (entry_update.h), which locks the table itself.
#include "mm/entry_refs.h"
#include "mm/entry_rules.h"
#include "mm/entry_update.h"
#include "mm/error.h"
#include "mm/page_refs.h"
#include "mm/table_access.h"
#include "mm/table_validation.h"

namespace mm {

namespace detail {

inline constexpr uint64_t kHardwareSetBits = PageTableEntry::kAccessed | PageTableEntry::kDirty;

// Writes `replacement` over `old` by compare-and-exchange. Under the table's frame lock only
// the hardware can change the entry meanwhile (another CPU's page walk setting Accessed or
// Dirty): then, as Xen's update_intpte, the store is retried against the entry as it is now,
// and with `preserve_accessed_dirty` the bits it found are kept (MMU_PT_UPDATE_PRESERVE_AD).
// `old` becomes the entry actually replaced, whose references the caller releases. `Exact`:
// no retry, the entry must still be `old` (the emulated write, which computes its result
// from the entry it replaces: it computes again). Fails if anything else changed the entry,
// which the lock makes impossible. Inlined into both callers: it is the whole of a one-entry
// update's store. `old_present`: the caller knows the old entry present, so its block needs
// no noting (a flip's store).
template <bool old_present = false, bool exact = false>
[[gnu::always_inline]] inline bool commit_entry(MmuContext& context, const LockedTable& table, unsigned index,
                                                PageTableEntry& old, PageTableEntry replacement,
                                                bool preserve_accessed_dirty) {
  for (;;) {
    PageTableEntry seen = old;
    PageTableEntry value =
        preserve_accessed_dirty ? replacement.with_flags(seen.raw() & kHardwareSetBits) : replacement;
    const bool done = old_present ? exchange_entry_in_noted_block(context.frames, table.mfn, index, seen, value)
                                  : exchange_entry(context.frames, table.mfn, table.info, index, seen, value);
    if (done) return true;
    if (exact || ((seen.raw() ^ old.raw()) & ~kHardwareSetBits) != 0) return false;
    old = seen;
  }
}

// An L1 entry that keeps its RAM frame and changes RW (besides flags that need no
// revalidation): the general reference the old entry holds carries over, so only the Writable
// type reference is taken (read-only to writable) or dropped (writable to read-only). Xen takes
// the new entry's references and drops the old one's; the counts after are the same. The frame
// must be one the context may map (the old entry may have been written with another page owner).
[[gnu::always_inline]] inline bool only_writable_flips(const MmuContext& context, PagingLevel level, PageTableEntry old,
                                                       PageTableEntry replacement) {
  if (level != PagingLevel::L1 || !old.present() || old.mfn() != replacement.mfn()) return false;
  const uint64_t changed = (old.raw() ^ replacement.raw()) & ~flags_changeable_without_revalidation(level);
  if (changed != PageTableEntry::kWritable) return false;
  // A guest's frame (may_map_frame_of without the hypervisor's shared frames and I/O memory,
  // whose entries hold no references to carry over). The old entry's general reference keeps
  // the owner what it is.
  if (!context.frames.contains(old.mfn())) return false;
  const domid_t owner = context.frames.info(old.mfn()).owner();
  return owner == context.owner_of_mapped_frames() && is_guest_domain(owner);
}

template <bool exact>
[[gnu::always_inline]] inline int flip_writable(MmuContext& context, const LockedTable& table, unsigned index,
                                                PageTableEntry old, PageTableEntry replacement,
                                                bool preserve_accessed_dirty) {
  const uint64_t mfn = replacement.mfn();
  const bool grants = replacement.writable();
  if (grants && get_page_type(context, mfn, PageType::Writable) != 0) return error(XEN_EBUSY);
  if (!commit_entry<true, exact>(context, table, index, old, replacement, preserve_accessed_dirty)) {
    if (grants) put_page_type(context.frames, mfn);
    return exact ? kEntryChanged : error(XEN_EBUSY);
  }
  if (!grants) put_page_type(context.frames, mfn);
  return 0;
}

}  // namespace detail

// Precondition: the caller holds `table`'s frame lock (a validated table of context.domain:
// its level and owner are not looked at again here), and index < 512. `exact`: the entry is
// replaced only if it still is `expected` (kEntryChanged, nothing done, otherwise); else the
// entry is read here and changes of the hardware's Accessed/Dirty bits meanwhile are tolerated.
template <bool exact = false>
[[gnu::always_inline]] inline int update_locked_table_entry_inline(MmuContext& context, const LockedTable& table,
                                                                   unsigned index, PageTableEntry requested,
                                                                   bool preserve_accessed_dirty,
                                                                   PageTableEntry expected = PageTableEntry()) {
  const PagingLevel level = table.level;
  const uint64_t table_mfn = table.mfn;
  if (!is_guest_slot(level, index)) return error(XEN_EINVAL);

  const uint64_t slot_maddr = (table_mfn << kPageShift) + index * sizeof(uint64_t);
  PageTableEntry old = exact ? expected : load_entry(context.frames, table_mfn, index);
  PageTableEntry replacement = requested;
  bool takes_references = false;
  if (replacement.present()) {
    int rc = check_new_entry_bits(context, level, replacement);
    if (rc != 0) return rc;
    replacement = adjust_guest_entry(level, replacement);
    if (detail::only_writable_flips(context, level, old, replacement))
      return detail::flip_writable<exact>(context, table, index, old, replacement, preserve_accessed_dirty);
    takes_references = !is_harmless_change(level, old, replacement);
    if (takes_references) {
      rc = take_checked_entry_references(context, level, replacement, context.domain.id, slot_maddr);
      if (rc != 0) return rc;
    }
  }
  const bool releases_old = takes_references || !replacement.present();
  if (!detail::commit_entry<false, exact>(context, table, index, old, replacement, preserve_accessed_dirty)) {
    if (takes_references) release_entry_references(context.frames, level, replacement, slot_maddr);
    return exact ? kEntryChanged : error(XEN_EBUSY);
  }
  if (releases_old) release_entry_references(context.frames, level, old, slot_maddr);
  if (level != PagingLevel::L1) context.frames.walks_changed();
  // RW flipped on a directory entry is checked as a new entry (linear tables) but keeps its table linked.
  const bool same_target = replacement.present() && replacement.mfn() == old.mfn();
  if (level != PagingLevel::L1 && releases_old && old.present() && !same_target) context.effects.table_unlinked = true;
  if (level == PagingLevel::L4) context.effects.l4_entry_changed = true;
  return 0;
}

}  // namespace mm
