#pragma once
#include "mm/frame_table.h"

namespace mm {

// Entries are read and written with single 8-byte atomic accesses: other CPUs walk these
// tables in hardware while we update them and may set Accessed/Dirty bits concurrently.
inline uint64_t* table_entries(const FrameTable& frames, uint64_t table_mfn) {
  return reinterpret_cast<uint64_t*>(frames.memory().frame(table_mfn));
}

inline PageTableEntry load_entry(const FrameTable& frames, uint64_t table_mfn, unsigned index) {
  return PageTableEntry(__atomic_load_n(&table_entries(frames, table_mfn)[index], __ATOMIC_RELAXED));
}

// Every store into a table notes the block of a nonzero entry in the table's nonzero_blocks
// (table_blocks.h): a zero block stays one until a store here fills it.
inline void note_nonzero(PageInfo& table, unsigned index, PageTableEntry entry) {
  if (entry.raw() != 0) table.nonzero_blocks |= block_of(index);
}

inline void store_entry(FrameTable& frames, uint64_t table_mfn, unsigned index, PageTableEntry entry) {
  note_nonzero(frames.info(table_mfn), index, entry);
  __atomic_store_n(&table_entries(frames, table_mfn)[index], entry.raw(), __ATOMIC_RELEASE);
}

// exchange_entry without noting: for an entry whose block is noted already (it replaces a
// nonzero entry, and every nonzero entry's block is in the mask).
inline bool exchange_entry_in_noted_block(FrameTable& frames, uint64_t table_mfn, unsigned index,
                                          PageTableEntry& expected, PageTableEntry desired) {
  uint64_t seen = expected.raw();
  bool done = __atomic_compare_exchange_n(&table_entries(frames, table_mfn)[index], &seen, desired.raw(), false,
                                          __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
  expected = PageTableEntry(seen);
  return done;
}

// Replaces `expected` by `desired`; on failure `expected` receives the current value.
// `table` is frames.info(table_mfn), which the updating caller has at hand.
inline bool exchange_entry(FrameTable& frames, uint64_t table_mfn, PageInfo& table, unsigned index,
                           PageTableEntry& expected, PageTableEntry desired) {
  note_nonzero(table, index, desired);
  return exchange_entry_in_noted_block(frames, table_mfn, index, expected, desired);
}

}  // namespace mm
