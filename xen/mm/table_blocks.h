#pragma once
#include "mm/page_table_entry.h"

namespace mm {

// A table's 512 entries by 64-byte blocks (one cache line, eight entries): bit b of a
// BlockMask stands for entries 8b..8b+7.
//
// Each validated table keeps in its PageInfo the blocks that may hold a nonzero entry
// (PageInfo::nonzero_blocks): validation sets it from its scan, and every store of a nonzero
// entry through table_access adds its block. Bits are never cleared while the table stays
// validated, so the mask is a superset: a block outside it is zero. Teardown then visits only
// those blocks, and a writable-pagetable detach copies only those, with no scan of the table
// (hardware sets Accessed/Dirty only in present entries, so it never makes a zero entry
// nonzero).
using BlockMask = uint64_t;

inline constexpr unsigned kBlockEntries = 8;
inline constexpr unsigned kTableBlocks = kEntriesPerTable / kBlockEntries;
static_assert(kTableBlocks == 64, "one bit of a uint64_t per block");

constexpr BlockMask block_of(unsigned index) { return BlockMask{1} << (index / kBlockEntries); }

// The OR of the eight entries of `block`: one `or mem, reg` an entry.
inline uint64_t block_or(const uint64_t* block) {
  uint64_t any = block[0];
#pragma GCC unroll 8
  for (unsigned i = 1; i < kBlockEntries; ++i) any |= block[i];
  return any;
}

// A line: eight blocks, 64 entries (one byte of a BlockMask, one word of PresentEntries).
inline constexpr unsigned kLineBlocks = 8;
inline constexpr unsigned kLineEntries = kLineBlocks * kBlockEntries;
inline constexpr unsigned kTableLines = kTableBlocks / kLineBlocks;

// The OR of the 64 entries of `line`, unrolled: one `or mem, reg` an entry.
inline uint64_t line_or(const uint64_t* line) {
  uint64_t any = line[0];
#pragma GCC unroll 64
  for (unsigned i = 1; i < kLineEntries; ++i) any |= line[i];
  return any;
}

}  // namespace mm
