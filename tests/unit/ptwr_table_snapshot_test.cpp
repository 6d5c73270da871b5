// The snapshot of a detached L1 by 64-byte blocks: every changed entry is found (against a
// plain entry-by-entry comparison), none that is unchanged, whatever the snapshot storage
// held before, wherever the blocks that held entries lie, and whatever zero blocks the
// table's nonzero_blocks (a superset, mm/table_blocks.h) names besides.
#include <gtest/gtest.h>

#include <random>
#include <utility>
#include <vector>

#include "ptwr/table_snapshot.h"

namespace {
using ptwr::BlockMask;
using ptwr::kSnapshotEntries;

struct Change {
  unsigned index;
  uint64_t written;
  uint64_t old;
  bool operator==(const Change&) const = default;
};

std::vector<Change> changes(const std::vector<uint64_t>& table, const std::vector<uint64_t>& snapshot,
                            BlockMask nonzero) {
  std::vector<Change> found;
  ptwr::for_each_changed_entry(table.data(), snapshot.data(), nonzero, [&](unsigned i, uint64_t written, uint64_t old) {
    found.push_back({i, written, old});
  });
  return found;
}

std::vector<Change> reference_changes(const std::vector<uint64_t>& before, const std::vector<uint64_t>& after) {
  std::vector<Change> found;
  for (unsigned i = 0; i < kSnapshotEntries; ++i)
    if (before[i] != after[i]) found.push_back({i, after[i], before[i]});
  return found;
}

// Exactly the blocks of `table` that hold a nonzero entry.
BlockMask exact_nonzero_blocks(const std::vector<uint64_t>& table) {
  BlockMask blocks = 0;
  for (unsigned i = 0; i < kSnapshotEntries; ++i)
    if (table[i] != 0) blocks |= mm::block_of(i);
  return blocks;
}

// Captures as a detach does with a table whose nonzero_blocks is exact.
BlockMask capture(const std::vector<uint64_t>& table, std::vector<uint64_t>& snapshot) {
  return ptwr::capture_snapshot(table.data(), snapshot.data(), exact_nonzero_blocks(table));
}

// Snapshot storage as a reused frame holds it: whatever an earlier table left there.
std::vector<uint64_t> stale_storage() { return std::vector<uint64_t>(kSnapshotEntries, 0xdeadbeefcafe0001ULL); }

TEST(TableSnapshot, EmptyTableHasNoBlocksAndNoChanges) {
  std::vector<uint64_t> table(kSnapshotEntries, 0), snapshot = stale_storage();
  BlockMask nonzero = capture(table, snapshot);
  EXPECT_EQ(nonzero, 0u);
  EXPECT_TRUE(changes(table, snapshot, nonzero).empty()) << "stale storage stands for zero";
}

TEST(TableSnapshot, CapturesOnlyTheBlocksItIsGiven) {
  std::vector<uint64_t> table(kSnapshotEntries, 0), snapshot = stale_storage();
  table[0] = 0x1067;    // block 0
  table[17] = 0x2000;   // block 2: not present, but not zero either (a guest's swap entry)
  table[511] = 0x3067;  // block 63
  const BlockMask blocks = (BlockMask{1} << 0) | (BlockMask{1} << 2) | (BlockMask{1} << 5) | (BlockMask{1} << 63);
  BlockMask captured = ptwr::capture_snapshot(table.data(), snapshot.data(), blocks);
  EXPECT_EQ(captured, blocks);
  for (unsigned block : {0u, 2u, 5u, 63u})
    for (unsigned i = block * 8; i < block * 8 + 8; ++i) EXPECT_EQ(snapshot[i], table[i]) << i;
  EXPECT_EQ(snapshot[8], 0xdeadbeefcafe0001ULL) << "a block not given is not copied";
  EXPECT_TRUE(changes(table, snapshot, captured).empty());
}

TEST(TableSnapshot, FindsNewEntriesInEmptyBlocksAndChangesInHeldOnes) {
  std::vector<uint64_t> table(kSnapshotEntries, 0), snapshot = stale_storage();
  table[9] = 0x5067;
  table[100] = 0x6067;
  BlockMask nonzero = capture(table, snapshot);
  std::vector<uint64_t> before = table;
  table[8] = 0x7067;    // new, in the held block 1
  table[9] = 0x5065;    // changed flags
  table[100] = 0;       // removed
  table[300] = 0x8067;  // new, in an empty block
  table[511] = 1;       // new, the last entry
  EXPECT_EQ(changes(table, snapshot, nonzero), reference_changes(before, table));
}

TEST(TableSnapshot, EntryRewrittenWithItsOldValueIsNotAChange) {
  std::vector<uint64_t> table(kSnapshotEntries, 0), snapshot = stale_storage();
  table[40] = 0x9067;
  BlockMask nonzero = capture(table, snapshot);
  table[40] = 0x9067;
  table[41] = 0;
  EXPECT_TRUE(changes(table, snapshot, nonzero).empty());
}

TEST(TableSnapshot, FullTableEveryEntryChanged) {
  std::vector<uint64_t> table(kSnapshotEntries), snapshot = stale_storage();
  for (unsigned i = 0; i < kSnapshotEntries; ++i) table[i] = (uint64_t{i} << 12) | 0x67;
  BlockMask nonzero = capture(table, snapshot);
  EXPECT_EQ(nonzero, ~BlockMask{0});
  std::vector<uint64_t> before = table;
  for (uint64_t& entry : table) entry &= ~uint64_t{2};  // write-protect all, as a fork does
  std::vector<Change> found = changes(table, snapshot, nonzero);
  EXPECT_EQ(found.size(), kSnapshotEntries);
  EXPECT_EQ(found, reference_changes(before, table));
}

// Alone in an empty table, beside one other entry of its block, and in a full table (every
// line wholly captured: the one-pass line comparison must find it).
TEST(TableSnapshot, EverySingleEntryChangeIsFoundAlone) {
  enum Fill { empty, neighbour, full };
  for (Fill fill : {empty, neighbour, full}) {
    for (unsigned i = 0; i < kSnapshotEntries; ++i) {
      std::vector<uint64_t> table(kSnapshotEntries, 0), snapshot = stale_storage();
      if (fill == neighbour) table[i ^ 1] = 0x1067;
      if (fill == full)
        for (unsigned j = 0; j < kSnapshotEntries; ++j) table[j] = (uint64_t{j} << 12) | 0x67;
      BlockMask nonzero = capture(table, snapshot);
      std::vector<uint64_t> before = table;
      table[i] = 0xabc067;
      ASSERT_EQ(changes(table, snapshot, nonzero), reference_changes(before, table)) << i << " fill " << fill;
    }
  }
}

// Random tables with runs of held and empty blocks (the run walk's edges: a run that reaches
// block 63, a single block, all blocks), random changes: the same as comparing every entry.
TEST(TableSnapshot, RandomTablesMatchTheEntryByEntryComparison) {
  std::mt19937_64 random(12);
  for (unsigned round = 0; round < 2000; ++round) {
    std::vector<uint64_t> table(kSnapshotEntries, 0), snapshot(kSnapshotEntries);
    for (uint64_t& word : snapshot) word = random();
    const BlockMask blocks = round % 7 == 0 ? ~BlockMask{0} : random() & random();
    for (unsigned i = 0; i < kSnapshotEntries; ++i)
      if (((blocks >> (i / 8)) & 1) && random() % 3) table[i] = random();
    // The table's nonzero_blocks may name zero blocks too (a superset): sometimes it does.
    const BlockMask extra = round % 3 == 0 ? random() & random() & random() : 0;
    BlockMask nonzero = ptwr::capture_snapshot(table.data(), snapshot.data(), exact_nonzero_blocks(table) | extra);
    std::vector<uint64_t> before = table;
    const unsigned writes = unsigned(random() % 40);
    for (unsigned w = 0; w < writes; ++w) {
      unsigned i = unsigned(random() % kSnapshotEntries);
      table[i] = random() % 4 == 0 ? 0 : random() % 4 == 0 ? before[i] : random();
    }
    ASSERT_EQ(changes(table, snapshot, nonzero), reference_changes(before, table)) << "round " << round;
  }
}

TEST(TableSnapshot, RunsCoverEverySetBitOnce) {
  for (BlockMask mask : {BlockMask{0}, ~BlockMask{0}, BlockMask{1}, BlockMask{1} << 63, BlockMask{0x8000000000000001},
                         BlockMask{0xf0f0f0f0f0f0f0f0}, BlockMask{0x7ffffffffffffffe}}) {
    BlockMask seen = 0;
    ptwr::detail::for_each_run(mask, [&](unsigned start, unsigned length) {
      ASSERT_GT(length, 0u);
      ASSERT_LE(start + length, 64u);
      for (unsigned b = start; b < start + length; ++b) {
        ASSERT_FALSE((seen >> b) & 1);
        seen |= BlockMask{1} << b;
      }
    });
    EXPECT_EQ(seen, mask);
  }
}
}  // namespace
