// The snapshot a detached L1 is compared with at reattach, kept by 64-byte blocks.
//
// Reattach must find every entry the guest changed while the table was writable: any of the
// 512 could have changed, and a checksum would not do (the guest knows the old entries and
// could write changes that keep any sum). So every entry is compared exactly, but a block of
// eight entries (one cache line) at a time: the XORs of a block with its snapshot ORed
// together, and only a block where that is nonzero is looked at entry by entry. Most blocks
// of a fork's tables are empty, so capture also notes which blocks held anything
// (`nonzero_blocks`) and copies only those; an empty block is compared by ORing its eight
// entries, one instruction each (compiled: `or mem, reg`), where loading and testing each
// against a full copy cost eight.
//
// The table is what the guest wrote, possibly concurrently with the scan: a block's summary
// only decides where to look; an entry that differs is read once more, atomically, and that
// value is the one handed on (and validated).
#pragma once
#include <stdint.h>

namespace ptwr {

inline constexpr unsigned kSnapshotEntries = 512;
inline constexpr unsigned kBlockEntries = 8;  // one 64-byte cache line
inline constexpr unsigned kSnapshotBlocks = kSnapshotEntries / kBlockEntries;
static_assert(kSnapshotBlocks == 64, "one bit of a uint64_t per block");

// Bit b: block b (entries 8b..8b+7) held a nonzero entry at capture, and the snapshot's
// entries 8b..8b+7 hold its copy. The snapshot's other blocks are stale: they stand for zero.
using BlockMask = uint64_t;

// Copies the blocks of `table` that hold a nonzero entry into the same places of `snapshot`.
BlockMask capture_snapshot(const uint64_t* table, uint64_t* snapshot);

namespace detail {
inline uint64_t block_or(const uint64_t* block) {
  uint64_t any = block[0];
#pragma GCC unroll 8
  for (unsigned i = 1; i < kBlockEntries; ++i) any |= block[i];
  return any;
}

inline uint64_t block_xor(const uint64_t* block, const uint64_t* snapshot) {
  uint64_t differ = block[0] ^ snapshot[0];
#pragma GCC unroll 8
  for (unsigned i = 1; i < kBlockEntries; ++i) differ |= block[i] ^ snapshot[i];
  return differ;
}

// The OR of every entry in [first, end), a whole number of blocks.
inline uint64_t range_or(const uint64_t* first, const uint64_t* end) {
  uint64_t any = 0;
  for (; first != end; first += kBlockEntries) {
#pragma GCC unroll 8
    for (unsigned i = 0; i < kBlockEntries; ++i) any |= first[i];
  }
  return any;
}

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

// The blocks that were empty at capture and hold an entry now. Each run of consecutive empty
// blocks is ORed whole first, one instruction an entry and three a run; only a run that holds
// anything is looked at block by block (a fork or a fault fills one or two blocks of a table).
inline BlockMask filled_empty_blocks(const uint64_t* table, BlockMask nonzero) {
  BlockMask filled = 0;
  detail::for_each_run(~nonzero, [&](unsigned start, unsigned length) {
    if (detail::range_or(table + start * kBlockEntries, table + (start + length) * kBlockEntries) == 0) return;
    for (unsigned block = start; block < start + length; ++block)
      if (detail::block_or(table + block * kBlockEntries) != 0) filled |= BlockMask{1} << block;
  });
  return filled;
}

inline constexpr uint64_t kEmptyBlock[kBlockEntries] = {};

// Calls changed(index, written, old) for every entry of `table` that differs from the
// snapshot `capture_snapshot` made (`nonzero` is what it returned), in increasing index
// order; `written` is one atomic read of the entry. The blocks looked at are the held ones and
// the empty ones that were filled. A held block is compared whole first (XORed with its
// snapshot) unless the block before it changed: changes come in runs (a fork write-protects
// every entry of a table), and a block that changed is compared again entry by entry anyway.
template <typename Changed>
void for_each_changed_entry(const uint64_t* table, const uint64_t* snapshot, BlockMask nonzero, Changed&& changed) {
  const BlockMask blocks = nonzero | filled_empty_blocks(table, nonzero);
  bool previous_changed = false;
  for (BlockMask left = blocks; left != 0; left &= left - 1) {
    const unsigned first = unsigned(__builtin_ctzll(left)) * kBlockEntries;
    const bool held = (nonzero >> (first / kBlockEntries)) & 1;
    const uint64_t* old = held ? snapshot + first : kEmptyBlock;
    if (held && !previous_changed && detail::block_xor(table + first, old) == 0) continue;
    previous_changed = false;
#pragma GCC unroll 8
    for (unsigned i = 0; i < kBlockEntries; ++i) {
      const uint64_t written = __atomic_load_n(&table[first + i], __ATOMIC_RELAXED);
      if (written == old[i]) continue;
      previous_changed = true;
      changed(first + i, written, old[i]);
    }
  }
}

}  // namespace ptwr
