#include <gtest/gtest.h>

#include <random>
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
  PresentEntries present = scan_table(table).present;
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
  EXPECT_EQ(indexes(scan_table(table).present), expected);
}

TEST(MmPresentEntries, NonPresentEntriesWithOtherBitsAreNotPresent) {
  // A guest may keep anything in a non-present entry (Linux keeps swap entries there).
  uint64_t table[kEntriesPerTable] = {};
  for (unsigned index = 0; index < kEntriesPerTable; ++index) table[index] = ~E::kPresent;  // every bit but P
  table[9] = E::kPresent;
  EXPECT_EQ(indexes(scan_table(table).present), std::vector<unsigned>{9});
}

TEST(MmPresentEntries, EveryEntryPresent) {
  uint64_t table[kEntriesPerTable];
  for (unsigned index = 0; index < kEntriesPerTable; ++index)
    table[index] = E::from_mfn(index, E::kPresent | E::kWritable).raw();
  PresentEntries present = scan_table(table).present;
  for (uint64_t word : present.words) EXPECT_EQ(word, ~uint64_t{0});
  EXPECT_EQ(indexes(present).size(), kEntriesPerTable);
}

TEST(MmPresentEntries, ScanNamesEveryBlockThatHoldsAnythingAndNoOther) {
  uint64_t table[kEntriesPerTable] = {};
  table[0] = E::from_mfn(1, E::kPresent).raw();  // block 0
  table[23] = 0x2000;                            // block 2: a swap entry, not present
  table[64] = 0x1;                               // block 8: only P
  table[511] = uint64_t{1} << 63;                // block 63: only NX
  const TableScan scan = scan_table(table);
  EXPECT_EQ(scan.nonzero_blocks,
            (BlockMask{1} << 0) | (BlockMask{1} << 2) | (BlockMask{1} << 8) | (BlockMask{1} << 63));
  EXPECT_EQ(indexes(scan.present), (std::vector<unsigned>{0, 64}));
}

TEST(MmPresentEntries, ScanOfGivenBlocksSeesOnlyThose) {
  uint64_t table[kEntriesPerTable] = {};
  for (unsigned index : {3u, 12u, 200u, 511u}) table[index] = E::from_mfn(index, E::kPresent).raw();
  const BlockMask blocks = block_of(12) | block_of(200) | block_of(300);
  EXPECT_EQ(indexes(scan_present_entries(table, blocks)), (std::vector<unsigned>{12, 200}));
  EXPECT_TRUE(scan_present_entries(table, 0).empty());
}

// Teardown scans the blocks validation and later stores named: on random tables, and with any
// zero blocks named besides, it finds exactly what a whole-table scan finds.
TEST(MmPresentEntries, ScanOfTheNonzeroBlocksEqualsTheWholeScan) {
  std::mt19937_64 random(7);
  for (unsigned round = 0; round < 500; ++round) {
    uint64_t table[kEntriesPerTable] = {};
    const uint64_t filled = random() & random();
    for (unsigned index = 0; index < kEntriesPerTable; ++index)
      if (((filled >> (index / kBlockEntries)) & 1) && random() % 4 == 0) table[index] = random();
    const TableScan scan = scan_table(table);
    for (unsigned index = 0; index < kEntriesPerTable; ++index)
      ASSERT_EQ(table[index] != 0 ? (scan.nonzero_blocks & block_of(index)) != 0 : true, true) << index;
    const BlockMask extra = round % 2 ? random() & random() : 0;
    const PresentEntries masked = scan_present_entries(table, scan.nonzero_blocks | extra);
    ASSERT_EQ(indexes(masked), indexes(scan.present)) << "round " << round;
  }
}

TEST(MmPresentEntries, KeepBelowCutsAtAnyIndex) {
  for (unsigned count : {0u, 1u, 63u, 64u, 65u, 300u, 511u, 512u}) {
    PresentEntries present;
    for (unsigned index = 0; index < kEntriesPerTable; ++index) present.add(index);
    present.keep_below(count);
    std::vector<unsigned> seen = indexes(present);
    ASSERT_EQ(seen.size(), count) << count;
    if (count > 0) {
      EXPECT_EQ(seen.back(), count - 1);
    }
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
