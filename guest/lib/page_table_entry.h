#pragma once
// Typed x86-64 page-table entries and the virtual-address split used by 4-level paging.
// Machine frame numbers (Mfn) and pseudo-physical frame numbers (Pfn) are distinct types:
// a PV guest sees both, and mixing them up is the classic PV bug.
#include <stdint.h>

namespace lib {

struct Mfn {
  uint64_t value;
  constexpr bool operator==(const Mfn&) const = default;
  constexpr uint64_t machine_address() const { return value << 12; }
};

struct Pfn {
  uint64_t value;
  constexpr bool operator==(const Pfn&) const = default;
};

class PageTableEntry {
 public:
  static constexpr uint64_t kPresent = 1ull << 0;
  static constexpr uint64_t kWritable = 1ull << 1;
  static constexpr uint64_t kUser = 1ull << 2;
  static constexpr uint64_t kAccessed = 1ull << 5;
  static constexpr uint64_t kDirty = 1ull << 6;
  static constexpr uint64_t kLarge = 1ull << 7;
  static constexpr uint64_t kNoExecute = 1ull << 63;
  static constexpr uint64_t kAddressMask = 0x000ffffffffff000ull;  // bits 51:12

  // Flags for a table that points to a lower-level table: the leaf decides the rights.
  static constexpr uint64_t kTableFlags = kPresent | kWritable | kUser | kAccessed;

  constexpr PageTableEntry() = default;
  constexpr explicit PageTableEntry(uint64_t raw) : raw_(raw) {}
  static constexpr PageTableEntry make(Mfn mfn, uint64_t flags) {
    return PageTableEntry((mfn.value << 12 & kAddressMask) | flags);
  }

  constexpr uint64_t raw() const { return raw_; }
  constexpr bool present() const { return raw_ & kPresent; }
  // An upper-level entry links a table when it is not empty, present or not: under writable
  // pagetables the hypervisor clears only the present bit of the L2 entry of an L1 it has
  // detached, so "is there a table here" must test for none (as Linux's pmd_none does).
  constexpr bool none() const { return raw_ == 0; }
  constexpr bool writable() const { return raw_ & kWritable; }
  constexpr bool user() const { return raw_ & kUser; }
  constexpr bool large() const { return raw_ & kLarge; }
  constexpr Mfn mfn() const { return Mfn{(raw_ & kAddressMask) >> 12}; }
  constexpr uint64_t flags() const { return raw_ & ~kAddressMask; }
  constexpr PageTableEntry with_flags(uint64_t flags) const { return PageTableEntry((raw_ & kAddressMask) | flags); }

 private:
  uint64_t raw_ = 0;
};

enum class Level { l1 = 1, l2 = 2, l3 = 3, l4 = 4 };

// Index of `va` in the table of `level` (9 bits per level above the 12-bit page offset).
constexpr unsigned table_index(uint64_t va, Level level) {
  return static_cast<unsigned>((va >> (12 + 9 * (static_cast<int>(level) - 1))) & 511);
}

constexpr uint64_t kPageSize = 4096;
constexpr uint64_t page_floor(uint64_t value) { return value & ~(kPageSize - 1); }
constexpr uint64_t page_ceil(uint64_t value) { return (value + kPageSize - 1) & ~(kPageSize - 1); }

}  // namespace lib
