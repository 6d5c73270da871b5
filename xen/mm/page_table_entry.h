#pragma once
#include "mm/machine_memory.h"

namespace mm {

inline constexpr unsigned kEntriesPerTable = 512;

// The machine we target (QEMU -cpu Westmere) has MAXPHYADDR = 40: address bits 51:40 of an
// entry are reserved and set them makes the hardware raise a reserved-bit page fault.
inline constexpr unsigned kPhysicalAddressBits = 40;

enum class PagingLevel : uint8_t { L1 = 1, L2 = 2, L3 = 3, L4 = 4 };

constexpr unsigned level_number(PagingLevel level) { return static_cast<unsigned>(level); }
constexpr PagingLevel next_lower(PagingLevel level) { return static_cast<PagingLevel>(level_number(level) - 1); }

// Index of the entry that translates `va` in a table of the given level.
constexpr unsigned table_index(uint64_t va, PagingLevel level) {
  return static_cast<unsigned>((va >> (kPageShift + 9 * (level_number(level) - 1))) & 511);
}

// One 64-bit x86 long-mode paging entry (any level), as a value.
class PageTableEntry {
 public:
  static constexpr uint64_t kPresent = uint64_t{1} << 0;
  static constexpr uint64_t kWritable = uint64_t{1} << 1;
  static constexpr uint64_t kUser = uint64_t{1} << 2;
  static constexpr uint64_t kWriteThrough = uint64_t{1} << 3;
  static constexpr uint64_t kCacheDisable = uint64_t{1} << 4;
  static constexpr uint64_t kAccessed = uint64_t{1} << 5;
  static constexpr uint64_t kDirty = uint64_t{1} << 6;
  // PS in L2/L3 (superpage) and L4 (reserved); PAT in L1.
  static constexpr uint64_t kPageSize = uint64_t{1} << 7;
  static constexpr uint64_t kGlobal = uint64_t{1} << 8;
  static constexpr uint64_t kAvailableLow = uint64_t{7} << 9;
  static constexpr uint64_t kAvailableHigh = uint64_t{0x7ff} << 52;
  static constexpr uint64_t kNoExecute = uint64_t{1} << 63;

  // Bits 51:12 are the architectural address field.
  static constexpr uint64_t kAddressMask = ((uint64_t{1} << 52) - 1) & ~(kPageBytes - 1);
  static constexpr uint64_t kReservedAddressBits = kAddressMask & ~((uint64_t{1} << kPhysicalAddressBits) - 1);
  static constexpr uint64_t kFlagsMask = ~kAddressMask;

  constexpr PageTableEntry() = default;
  constexpr explicit PageTableEntry(uint64_t raw) : raw_(raw) {}
  static constexpr PageTableEntry from_mfn(uint64_t mfn, uint64_t flags) {
    return PageTableEntry(((mfn << kPageShift) & kAddressMask) | (flags & kFlagsMask));
  }

  constexpr uint64_t raw() const { return raw_; }
  constexpr uint64_t mfn() const { return (raw_ & kAddressMask) >> kPageShift; }
  constexpr uint64_t flags() const { return raw_ & kFlagsMask; }
  constexpr bool has(uint64_t bits) const { return (raw_ & bits) == bits; }
  constexpr bool has_any(uint64_t bits) const { return (raw_ & bits) != 0; }

  constexpr bool present() const { return has(kPresent); }
  constexpr bool writable() const { return has(kWritable); }
  constexpr bool user() const { return has(kUser); }
  constexpr bool accessed() const { return has(kAccessed); }
  constexpr bool dirty() const { return has(kDirty); }
  constexpr bool pse() const { return has(kPageSize); }
  constexpr bool global() const { return has(kGlobal); }
  constexpr bool nx() const { return has(kNoExecute); }
  constexpr bool reserved_address_bits() const { return has_any(kReservedAddressBits); }

  constexpr PageTableEntry with_mfn(uint64_t mfn) const { return from_mfn(mfn, flags()); }
  constexpr PageTableEntry with_flags(uint64_t bits) const { return PageTableEntry(raw_ | (bits & kFlagsMask)); }
  constexpr PageTableEntry without_flags(uint64_t bits) const { return PageTableEntry(raw_ & ~(bits & kFlagsMask)); }

  friend constexpr bool operator==(PageTableEntry, PageTableEntry) = default;

 private:
  uint64_t raw_ = 0;
};

}  // namespace mm
