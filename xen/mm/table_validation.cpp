#include "mm/table_validation.h"

#include "mm/entry_refs.h"
#include "mm/entry_rules.h"
#include "mm/present_entries.h"
#include "mm/table_access.h"

namespace mm {

namespace {

uint64_t slot_address(uint64_t table_mfn, unsigned index) {
  return (table_mfn << kPageShift) + index * sizeof(uint64_t);
}

// Only the guest's slots count: an L4's hypervisor slots hold no references of the guest's.
PresentEntries guest_slots_of(PresentEntries present, PagingLevel level) {
  if (level == PagingLevel::L4) present.drop_hypervisor_l4_slots();
  return present;
}

void release_entries(FrameTable& frames, uint64_t mfn, PagingLevel level, const PresentEntries& entries) {
  entries.for_each([&](unsigned index) {
    release_entry_references(frames, level, load_entry(frames, mfn, index), slot_address(mfn, index));
  });
}

void release_l1_table_references(FrameTable& frames, uint64_t mfn) {
  for (BlockMask blocks = frames.info(mfn).nonzero_blocks; blocks != 0; blocks &= blocks - 1) {
    const unsigned first = static_cast<unsigned>(__builtin_ctzll(blocks)) * kBlockEntries;
    for (unsigned index = first; index < first + kBlockEntries; ++index) {
      const PageTableEntry entry = load_entry(frames, mfn, index);
      if (entry.present()) release_l1_entry_references(frames, entry);
    }
  }
}

void install_adjusted_entries(MmuContext& context, uint64_t mfn, PagingLevel level, const PresentEntries& present) {
  if (level == PagingLevel::L4) {
    for (unsigned index = kFirstHypervisorSlot; index <= kLastHypervisorSlot; ++index)
      store_entry(context.frames, mfn, index, context.hypervisor_slots.slot(index));
  }
  present.for_each([&](unsigned index) {
    PageTableEntry entry = load_entry(context.frames, mfn, index);
    PageTableEntry adjusted = adjust_guest_entry(level, entry);
    if (adjusted != entry) store_entry(context.frames, mfn, index, adjusted);
  });
}

}  // namespace

int validate_table(MmuContext& context, uint64_t mfn, PagingLevel level) {
  PageInfo& page = context.frames.info(mfn);
  const domid_t owner = page.owner();
  // The table cannot change meanwhile: it has no writable mapping (its type is being taken)
  // and this CPU owns it (its one type reference, not validated: no one can lock it).
  // Everything below visits only the present entries: most entries of a table are empty, and
  // this pass is the bulk of what a fork costs. The stores below add to the nonzero blocks it
  // found.
  const TableScan scan = scan_table(table_entries(context.frames, mfn));
  page.nonzero_blocks = scan.nonzero_blocks;
  const PresentEntries present = guest_slots_of(scan.present, level);
  // Entries take_entry_references narrowed (read-only I/O memory): stored only on success,
  // so a table that fails validation is left as the guest wrote it.
  PresentEntries narrowed;
  int rc = 0;
  unsigned failed_index = 0;
  present.for_each_while([&](unsigned index) {
    const PageTableEntry loaded = load_entry(context.frames, mfn, index);
    PageTableEntry entry = loaded;
    rc = take_entry_references(context, level, entry, owner, slot_address(mfn, index));
    if (rc != 0) {
      failed_index = index;
      return false;
    }
    if (entry != loaded) narrowed.add(index);
    return true;
  });
  if (rc != 0) {
    PresentEntries taken = present;
    taken.keep_below(failed_index);
    release_entries(context.frames, mfn, level, taken);
    return rc;
  }
  narrowed.for_each([&](unsigned index) {  // narrowing only ever drops RW
    store_entry(context.frames, mfn, index,
                load_entry(context.frames, mfn, index).without_flags(PageTableEntry::kWritable));
  });
  install_adjusted_entries(context, mfn, level, present);
  return 0;
}

// Only the blocks that may hold an entry are looked at (table_blocks.h): an exit's teardown
// of a fork's tables, most of whose blocks are empty, reads a few lines of each.
// An L1's (nearly every table torn down) are released as its blocks are read: entry by entry,
// each present one inline, in the order of the others' scan.
void release_table_references(FrameTable& frames, uint64_t mfn, PagingLevel level) {
  if (level == PagingLevel::L1) return release_l1_table_references(frames, mfn);
  const PresentEntries present = scan_present_entries(table_entries(frames, mfn), frames.info(mfn).nonzero_blocks);
  release_entries(frames, mfn, level, guest_slots_of(present, level));
}

}  // namespace mm
