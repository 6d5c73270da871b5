#pragma once
#include "mm/entry_rules.h"
#include "mm/error.h"
#include "mm/mmu_context.h"
#include "mm/page_refs.h"

namespace mm {

// What a present entry holds:
//   L1: a general ref on the mapped frame, plus a Writable type ref if the entry is RW.
//   L2/L3/L4: a general ref and a type ref of the next-lower table type on the target
//   (which validates the target if it was not yet a table of that type); or, read-only, a
//   linear entry to a table of its own level (mm/linear_tables.h): nothing if it is the table
//   itself, else a general and a type ref of that level.
// The hypervisor's own L4 slots hold nothing.

// Checks a present guest entry (bits and target) and takes its references. `table_owner`
// owns the table the entry lives in; L2-L4 targets must belong to it. Errors (as Xen):
//   -EINVAL bad bits (check_new_entry_bits) or an L2-L4 target that is missing, foreign, or of a
//           conflicting type;
//   -EPERM  an L1 target outside the frame table (I/O memory) the caller may not map
//           (io_frame_access: unprivileged, beyond the address width, interrupt hardware);
//   -EBUSY  an L1 target the caller may not map, or an RW mapping of a frame that is in use
//           as a page table (or descriptor table).
// Counts unchanged on failure. On success `entry` may be narrowed: a writable mapping of
// read-only I/O memory (the IO-APICs) loses RW, as Xen's get_page_from_l1e makes it; the
// caller stores the entry as narrowed.
// `slot_maddr` is the machine address of the entry itself: an L2-L4 entry records it as the
// link of the table it points at (PageInfo::linked_by).
int take_entry_references(MmuContext& context, PagingLevel level, PageTableEntry& entry, domid_t table_owner,
                          uint64_t slot_maddr);
// The same for an entry whose bits the caller has just checked (check_new_entry_bits):
// update_table_entry checks before it decides whether references are taken at all, and
// checking again per entry is a second validation of the same value.
// Inline for the entry nearly every update writes: an L1 entry mapping a RAM frame of a guest
// that the page owner owns. Every other entry (I/O memory, hypervisor frames, frames the
// caller may not map, L2-L4 targets) goes out of line.
int take_other_entry_references(MmuContext& context, PagingLevel level, PageTableEntry& entry, domid_t table_owner,
                                uint64_t slot_maddr);
// What an L1 entry mapping an ordinary frame of `owner` holds: a general reference, and a
// Writable type reference if the entry is RW. -EBUSY (counts unchanged) if either is refused.
[[gnu::always_inline]] inline int take_ordinary_frame_references(MmuContext& context, PageTableEntry entry,
                                                                 domid_t owner) {
  if (get_page(context.frames, entry.mfn(), owner) != 0) return error(XEN_EBUSY);
  if (entry.writable() && get_page_type(context, entry.mfn(), PageType::Writable) != 0) {
    put_page(context.frames, entry.mfn());
    return error(XEN_EBUSY);
  }
  return 0;
}
[[gnu::always_inline]] inline int take_checked_entry_references(MmuContext& context, PagingLevel level,
                                                                PageTableEntry& entry, domid_t table_owner,
                                                                uint64_t slot_maddr) {
  if (!entry.present()) return 0;
  if (level != PagingLevel::L1 || !context.frames.contains(entry.mfn())) [[unlikely]]
    return take_other_entry_references(context, level, entry, table_owner, slot_maddr);
  const domid_t owner = context.frames.info(entry.mfn()).owner();
  if (!is_guest_domain(owner) || owner != context.owner_of_mapped_frames()) [[unlikely]]
    return take_other_entry_references(context, level, entry, table_owner, slot_maddr);
  return take_ordinary_frame_references(context, entry, owner);
}

// check_entry_bits for an entry this context writes, with Xen's one exception for a domain
// with I/O memory (l1_disallow_mask without PAGE_CACHE_ATTRS): a privileged caller's L1 entry
// mapping I/O memory may carry PWT, PCD and PAT (Linux's ioremap of the ACPI tables is UC-).
// The same bits on RAM stay -EINVAL here (Xen accepts them and re-types the frame's cache
// attribute in its own mappings, which this hypervisor does not do).
// Inline: nearly every entry carries none of those bits, and then this is check_entry_bits.
inline constexpr uint64_t kCacheAttributeFlags =
    PageTableEntry::kWriteThrough | PageTableEntry::kCacheDisable | PageTableEntry::kPageSize;  // PAT in L1
int check_io_entry_bits(const MmuContext& context, PageTableEntry entry);                       // an L1 entry with them
inline int check_new_entry_bits(const MmuContext& context, PagingLevel level, PageTableEntry entry) {
  if (level == PagingLevel::L1 && entry.has_any(kCacheAttributeFlags)) [[unlikely]]
    return check_io_entry_bits(context, entry);
  return check_entry_bits(level, entry);
}

// Releases what take_entry_references took for the same (present) entry; no-op otherwise
// (inline: a new entry replaces an empty one as often as not).
void release_present_entry_references(FrameTable& frames, PagingLevel level, PageTableEntry entry, uint64_t slot_maddr);
// The same for a present L1 entry, inline for the loop of an L1's teardown: a general
// reference, and the Writable type reference of an RW entry. I/O memory and the hypervisor's
// shared frames held nothing (their owners are looked at out of line).
[[gnu::noinline, gnu::cold]] bool holds_no_references(const FrameTable& frames, uint64_t mfn);
[[gnu::always_inline]] inline void release_l1_entry_references(FrameTable& frames, PageTableEntry entry) {
  const uint64_t mfn = entry.mfn();
  if (!frames.contains(mfn)) return;
  const domid_t owner = frames.info(mfn).owner();
  if ((owner == DOMID_IO || owner == DOMID_XEN) && holds_no_references(frames, mfn)) [[unlikely]]
    return;
  if (!entry.writable()) return put_page(frames, mfn);
  put_page_and_type(frames, mfn);
}
[[gnu::always_inline]] inline void release_entry_references(FrameTable& frames, PagingLevel level, PageTableEntry entry,
                                                            uint64_t slot_maddr) {
  if (entry.present()) release_present_entry_references(frames, level, entry, slot_maddr);
}

}  // namespace mm
