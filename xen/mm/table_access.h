#pragma once
#include "mm/frame_table.h"

namespace mm {

// Entries are read and written with single 8-byte atomic accesses: other CPUs walk these
// tables in hardware while we update them and may set Accessed/Dirty bits concurrently.
inline uint64_t* table_entries(const FrameTable& frames, uint64_t table_mfn) {
    return reinterpret_cast<uint64_t*>(frames.memory().frame(table_mfn));
}

inline PageTableEntry load_entry(const FrameTable& frames, uint64_t table_mfn, unsigned index) {
    return PageTableEntry(__atomic_load_n(&table_entries(frames, table_mfn)[index],
                                          __ATOMIC_RELAXED));
}

// Every store into a table notes the block of a nonzero entry in the table's nonzero_blocks
// (table_blocks.h): a zero block stays one until a store here fills it.
inline void note_nonzero(PageInfo& table, unsigned index, PageTableEntry entry) {
    if (entry.raw() != 0) table.nonzero_blocks |= block_of(index);
}

inline void store_entry(FrameTable& frames, uint64_t table_mfn, unsigned index,
                        PageTableEntry entry) {
    note_nonzero(frames.info(table_mfn), index, entry);
    __atomic_store_n(&table_entries(frames, table_mfn)[index], entry.raw(), __ATOMIC_RELEASE);
}

// exchange_entry where `expected` is nonzero: its block is in the mask already (every nonzero
// entry's is), so nothing is noted.
inline bool exchange_nonzero_entry(FrameTable& frames, uint64_t table_mfn, unsigned index,
                                   PageTableEntry& expected, PageTableEntry desired) {
    uint64_t seen = expected.raw();
    bool done = __atomic_compare_exchange_n(&table_entries(frames, table_mfn)[index], &seen,
                                            desired.raw(), false, __ATOMIC_ACQ_REL,
                                            __ATOMIC_RELAXED);
    expected = PageTableEntry(seen);
    return done;
}

// Replaces `expected` by `desired`; on failure `expected` receives the current value.
// `table` is frames.info(table_mfn), which the updating caller has at hand.
inline bool exchange_entry(FrameTable& frames, uint64_t table_mfn, PageInfo& table, unsigned index,
                           PageTableEntry& expected, PageTableEntry desired) {
    note_nonzero(table, index, desired);
    uint64_t seen = expected.raw();
    bool done = __atomic_compare_exchange_n(&table_entries(frames, table_mfn)[index], &seen,
                                            desired.raw(), false, __ATOMIC_ACQ_REL,
                                            __ATOMIC_RELAXED);
    expected = PageTableEntry(seen);
    return done;
}

}  // namespace mm
