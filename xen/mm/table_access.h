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

inline void store_entry(const FrameTable& frames, uint64_t table_mfn, unsigned index,
                        PageTableEntry entry) {
    __atomic_store_n(&table_entries(frames, table_mfn)[index], entry.raw(), __ATOMIC_RELEASE);
}

// Replaces `expected` by `desired`; on failure `expected` receives the current value.
inline bool exchange_entry(const FrameTable& frames, uint64_t table_mfn, unsigned index,
                           PageTableEntry& expected, PageTableEntry desired) {
    uint64_t seen = expected.raw();
    bool done = __atomic_compare_exchange_n(&table_entries(frames, table_mfn)[index], &seen,
                                            desired.raw(), false, __ATOMIC_ACQ_REL,
                                            __ATOMIC_RELAXED);
    expected = PageTableEntry(seen);
    return done;
}

}  // namespace mm
