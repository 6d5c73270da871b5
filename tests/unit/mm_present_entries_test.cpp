#include <gtest/gtest.h>

#include <vector>

#include "mm/present_entries.h"

namespace mm {
namespace {

using E = PageTableEntry;

std::vector<unsigned> indexes(const PresentEntries& present) {
    std::vector<unsigned> seen;
    present.for_each([&](unsigned index) { seen.push_back(index); });
    return seen;
}

TEST(MmPresentEntries, EmptyTableHasNoPresentEntries) {
    uint64_t table[kEntriesPerTable] = {};
    PresentEntries present = scan_present_entries(table);
    EXPECT_TRUE(present.empty());
    EXPECT_TRUE(indexes(present).empty());
}

TEST(MmPresentEntries, FindsEveryPresentEntryWhateverItsGroupAndWord) {
    // The scan tests eight entries at once: entries at both ends of a group, of a 64-bit
    // word and of the table, and a group with all eight present.
    uint64_t table[kEntriesPerTable] = {};
    const std::vector<unsigned> expected = {0,   7,   8,   63,  64,  100, 101, 102, 103,
                                            104, 105, 106, 107, 255, 256, 271, 272, 511};
    for (unsigned index : expected) table[index] = E::from_mfn(index + 1, E::kPresent).raw();
    EXPECT_EQ(indexes(scan_present_entries(table)), expected);
}

TEST(MmPresentEntries, NonPresentEntriesWithOtherBitsAreNotPresent) {
    // A guest may keep anything in a non-present entry (Linux keeps swap entries there).
    uint64_t table[kEntriesPerTable] = {};
    for (unsigned index = 0; index < kEntriesPerTable; ++index)
        table[index] = ~E::kPresent;  // every bit but P
    table[9] = E::kPresent;
    EXPECT_EQ(indexes(scan_present_entries(table)), std::vector<unsigned>{9});
}

TEST(MmPresentEntries, EveryEntryPresent) {
    uint64_t table[kEntriesPerTable];
    for (unsigned index = 0; index < kEntriesPerTable; ++index)
        table[index] = E::from_mfn(index, E::kPresent | E::kWritable).raw();
    PresentEntries present = scan_present_entries(table);
    for (uint64_t word : present.words) EXPECT_EQ(word, ~uint64_t{0});
    EXPECT_EQ(indexes(present).size(), kEntriesPerTable);
}

TEST(MmPresentEntries, KeepBelowCutsAtAnyIndex) {
    for (unsigned count : {0u, 1u, 63u, 64u, 65u, 300u, 511u, 512u}) {
        PresentEntries present;
        for (unsigned index = 0; index < kEntriesPerTable; ++index) present.add(index);
        present.keep_below(count);
        std::vector<unsigned> seen = indexes(present);
        ASSERT_EQ(seen.size(), count) << count;
        if (count > 0) EXPECT_EQ(seen.back(), count - 1);
    }
}

TEST(MmPresentEntries, DropsExactlyTheHypervisorL4Slots) {
    PresentEntries present;
    for (unsigned index = 0; index < kEntriesPerTable; ++index) present.add(index);
    present.drop_hypervisor_l4_slots();
    for (unsigned index = 0; index < kEntriesPerTable; ++index)
        EXPECT_EQ(present.contains(index), !is_hypervisor_l4_slot(index)) << index;
}

TEST(MmPresentEntries, ForEachWhileStopsWhereTheVisitSays) {
    PresentEntries present;
    for (unsigned index : {3u, 70u, 200u, 400u}) present.add(index);
    std::vector<unsigned> seen;
    EXPECT_FALSE(present.for_each_while([&](unsigned index) {
        seen.push_back(index);
        return index != 200;
    }));
    EXPECT_EQ(seen, (std::vector<unsigned>{3, 70, 200}));
    EXPECT_TRUE(present.for_each_while([](unsigned) { return true; }));
}

}  // namespace
}  // namespace mm
