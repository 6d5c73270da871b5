// The snapshot a detached L1 is compared with at reattach, kept by 64-byte blocks.
//
// Reattach must find every entry the guest changed while the table was writable: any of the
// 512 could have changed, and a checksum would not do (the guest knows the old entries and
// could write changes that keep any sum). So every entry is compared exactly, but a block of
// eight entries (one cache line) at a time: the XORs of a block with its snapshot ORed
// together, and only a block where that is nonzero is looked at entry by entry. Capture
// copies only the blocks the table's nonzero_blocks names (mm/table_blocks.h: a superset of
// those that hold anything, so capture reads nothing else); the others are zero, and at
// reattach an empty block is compared by ORing its eight entries, one instruction each
// (compiled: `or mem, reg`), where loading and testing each against a full copy cost eight.
//
// The table is what the guest wrote, possibly concurrently with the scan: a block's summary
// only decides where to look; an entry that differs is read once more, atomically, and that
// value is the one handed on (and validated).
#pragma once
#include <stdint.h>

#include "mm/table_blocks.h"

namespace ptwr {

using mm::BlockMask;
using mm::kBlockEntries;
inline constexpr unsigned kSnapshotEntries = mm::kEntriesPerTable;
inline constexpr unsigned kSnapshotBlocks = mm::kTableBlocks;

// Copies the blocks `blocks` of `table` into the same places of `snapshot` and returns them:
// bit b says the snapshot's entries 8b..8b+7 hold the copy of block b. The snapshot's other
// blocks are stale: they stand for zero, so `blocks` must hold every block that is not zero.
BlockMask capture_snapshot(const uint64_t* table, uint64_t* snapshot, BlockMask blocks);

namespace detail {
inline uint64_t block_xor(const uint64_t* block, const uint64_t* snapshot) {
  uint64_t differ = block[0] ^ snapshot[0];
#pragma GCC unroll 8
  for (unsigned i = 1; i < kBlockEntries; ++i) differ |= block[i] ^ snapshot[i];
  return differ;
}

inline unsigned line_blocks(BlockMask mask, unsigned line) { return unsigned(mask >> (line * mm::kLineBlocks)) & 0xff; }

// mm::line_or, out of line, so that it is one straight pass of loads (inlined, the compiler
// kept the line's entries in registers and on the stack for the block-by-block pass after it).
uint64_t line_or_out_of_line(const uint64_t* line);

// Calls visit(first_block, blocks) for every run of consecutive set bits of `mask`.
template <typename Visit>
[[gnu::always_inline]] inline void for_each_run(BlockMask mask, Visit&& visit) {
  while (mask != 0) {
    const unsigned start = unsigned(__builtin_ctzll(mask));
    const BlockMask rest = mask >> start;
    const unsigned length = ~rest == 0 ? kSnapshotBlocks - start : unsigned(__builtin_ctzll(~rest));
    visit(start, length);
    mask = start + length == kSnapshotBlocks ? 0 : mask & (~BlockMask{0} << (start + length));
  }
}
}  // namespace detail

// The blocks that were not captured (empty) and hold an entry now. A wholly empty line is ORed
// in one pass first, one instruction an entry, and looked at block by block only when that
// finds something: most lines of a fork's tables are empty.
inline BlockMask filled_empty_blocks(const uint64_t* table, BlockMask captured) {
  BlockMask filled = 0;
  for (unsigned line = 0; line < mm::kTableLines; ++line) {
    const unsigned empty = ~detail::line_blocks(captured, line) & 0xff;
    const uint64_t* entries = table + line * mm::kLineEntries;
    if (empty == 0 || (empty == 0xff && detail::line_or_out_of_line(entries) == 0)) continue;
    for (unsigned left = empty; left != 0; left &= left - 1) {
      const unsigned block = unsigned(__builtin_ctz(left));
      if (mm::block_or(entries + block * kBlockEntries) != 0)
        filled |= BlockMask{1} << (line * mm::kLineBlocks + block);
    }
  }
  return filled;
}

// The captured blocks that differ from their snapshot. Each run of consecutive captured
// blocks is compared in one loop, a block's eight XORs ORed together and its bit set when that
// is nonzero: three instructions an entry and a few a block, with nothing to decide between
// blocks. (Comparing a wholly captured line in one pass first, as filled_empty_blocks does with
// empty ones, cost more than it saved: a line that differs is compared twice.)
inline BlockMask differing_captured_blocks(const uint64_t* table, const uint64_t* snapshot, BlockMask captured) {
  BlockMask differing = 0;
  detail::for_each_run(captured, [&](unsigned start, unsigned length) {
    for (unsigned block = start; block < start + length; ++block) {
      const unsigned first = block * kBlockEntries;
      differing |= BlockMask{detail::block_xor(table + first, snapshot + first) != 0} << block;
    }
  });
  return differing;
}

inline constexpr uint64_t kEmptyBlock[kBlockEntries] = {};

// Calls changed(index, written, old) for every entry of `table` that differs from the
// snapshot `capture_snapshot` made (`captured` is what it returned), in increasing index
// order; `written` is one atomic read of the entry. Only the blocks found to differ (captured
// ones that changed, empty ones that were filled) are looked at entry by entry.
template <typename Changed>
void for_each_changed_entry(const uint64_t* table, const uint64_t* snapshot, BlockMask captured, Changed&& changed) {
  const BlockMask differing =
      differing_captured_blocks(table, snapshot, captured) | filled_empty_blocks(table, captured);
  for (BlockMask left = differing; left != 0; left &= left - 1) {
    const unsigned block = unsigned(__builtin_ctzll(left));
    const unsigned first = block * kBlockEntries;
    const uint64_t* old = (captured >> block) & 1 ? snapshot + first : kEmptyBlock;
#pragma GCC unroll 8
    for (unsigned i = 0; i < kBlockEntries; ++i) {
      const uint64_t written = __atomic_load_n(&table[first + i], __ATOMIC_RELAXED);
      if (written != old[i]) changed(first + i, written, old[i]);
    }
  }
}

}  // namespace ptwr
