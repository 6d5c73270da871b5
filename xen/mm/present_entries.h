#pragma once
#include "mm/hypervisor_slots.h"
#include "mm/table_blocks.h"

namespace mm {

// Which entries of one table are present: bit i % 64 of word i / 64 is entry i's P bit.
// Whole-table validation and teardown visit only these. Most entries of a table are empty
// (a fork's tables hold a few dozen entries each), so the scan is what they cost: eight raw
// words ORed together and one test per eight entries, about two instructions an empty entry,
// where loading and testing each one costs eight.
struct PresentEntries {
  static constexpr unsigned kWords = kTableLines;
  uint64_t words[kWords] = {};

  constexpr bool contains(unsigned index) const { return (words[index / 64] >> (index % 64)) & 1; }
  constexpr void add(unsigned index) { words[index / 64] |= uint64_t{1} << (index % 64); }

  // Keeps only the indexes below `count`.
  constexpr void keep_below(unsigned count) {
    for (unsigned word = 0; word < kWords; ++word) {
      const unsigned first = word * 64;
      if (count <= first)
        words[word] = 0;
      else if (count < first + 64)
        words[word] &= (uint64_t{1} << (count - first)) - 1;
    }
  }

  // Drops the hypervisor's L4 slots 256..271 (they hold no references of the guest's).
  constexpr void drop_hypervisor_l4_slots() {
    static_assert(kFirstHypervisorSlot % 64 + kHypervisorSlotCount <= 64);
    constexpr uint64_t slots = ((uint64_t{1} << kHypervisorSlotCount) - 1) << (kFirstHypervisorSlot % 64);
    words[kFirstHypervisorSlot / 64] &= ~slots;
  }

  constexpr bool empty() const {
    uint64_t any = 0;
    for (uint64_t word : words) any |= word;
    return any == 0;
  }

  // Calls visit(index) for every present index, in increasing order, while it returns
  // true; returns false when a visit stopped it.
  template <typename Visit>
  constexpr bool for_each_while(Visit&& visit) const {
    for (unsigned word = 0; word < kWords; ++word) {
      for (uint64_t bits = words[word]; bits != 0; bits &= bits - 1) {
        if (!visit(word * 64 + static_cast<unsigned>(__builtin_ctzll(bits)))) return false;
      }
    }
    return true;
  }

  // Calls visit(index) for every present index, in increasing order.
  template <typename Visit>
  constexpr void for_each(Visit&& visit) const {
    for_each_while([&](unsigned index) {
      visit(index);
      return true;
    });
  }
};

namespace detail {
// The P bits of the eight entries of `block`, as bits 0..7, gathered with relaxed atomic loads
// (another CPU's page walk may set Accessed or Dirty meanwhile, never P: a pass that found
// the group with or without P before sees the P bits this one reads).
inline uint64_t block_present_bits(const uint64_t* group) {
  uint64_t bits = 0;
#pragma GCC unroll 8
  for (unsigned i = 0; i < kBlockEntries; ++i)
    bits |= (__atomic_load_n(&group[i], __ATOMIC_RELAXED) & PageTableEntry::kPresent) << i;
  return bits;
}
}  // namespace detail

// What one pass over a whole table finds: its present entries and the blocks that hold
// anything (table_blocks.h).
struct TableScan {
  PresentEntries present;
  BlockMask nonzero_blocks = 0;
};

// The pass over the 512 raw entries at `entries` that validation makes. First each 64 entries
// (one word of the answer) are ORed together with plain loads, one `or mem, reg` an entry: a
// fork's tables hold their few dozen entries in one or two of the eight, and this pass is all
// an empty 64 costs. Within the others, blocks of eight are ORed the same way, and the P bits
// of a block with any are gathered.
inline TableScan scan_table(const uint64_t* entries) {
  TableScan scan;
  for (unsigned word = 0; word < PresentEntries::kWords; ++word) {
    const uint64_t* chunk = entries + word * kLineEntries;
    if (line_or(chunk) == 0) continue;
    for (unsigned block = 0; block < kLineBlocks; ++block) {
      const uint64_t any = block_or(chunk + block * kBlockEntries);
      if (any == 0) continue;
      scan.nonzero_blocks |= BlockMask{1} << (word * kLineBlocks + block);
      if ((any & PageTableEntry::kPresent) == 0) continue;
      scan.present.words[word] |= detail::block_present_bits(chunk + block * kBlockEntries) << (block * kBlockEntries);
    }
  }
  return scan;
}

// The present entries of the blocks `blocks` of the table at `entries` (the others are known
// to be zero): what teardown visits, so a table's empty blocks cost it nothing.
inline PresentEntries scan_present_entries(const uint64_t* entries, BlockMask blocks) {
  PresentEntries present;
  for (; blocks != 0; blocks &= blocks - 1) {
    const unsigned block = static_cast<unsigned>(__builtin_ctzll(blocks));
    const uint64_t* group = entries + block * kBlockEntries;
    if ((block_or(group) & PageTableEntry::kPresent) == 0) continue;
    present.words[block / kLineBlocks] |= detail::block_present_bits(group) << (block % kLineBlocks * kBlockEntries);
  }
  return present;
}

}  // namespace mm
