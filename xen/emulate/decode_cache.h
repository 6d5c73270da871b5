// Remembers decoded page-table-writing instructions so a guest that writes PTEs from the
// same few instructions (set_pte, ptep_get_and_clear, ...) skips Zydis after the first time.
//
// Keyed by the guest RIP and validated by the instruction bytes themselves: a slot stores the bytes it was decoded
// from and matches only if the guest's current bytes are the same. Since decoding is a pure
// function of those bytes (DecodedWrite holds no address or register value), a byte match
// makes a stale entry impossible whatever the guest did to its code or its mappings in the
// meantime: self-modifying code, a remapped code page or a reused frame all just miss.
// (The hypervisor cannot see guest writes to its own code pages, so a generation counter
// would need write-protecting code; comparing at most 15 bytes the fetch already brought in
// costs less than the fault that got us here.)
//
// Direct-mapped, one slot per hash bucket, newest wins. One instance per physical CPU: it
// is not locked (one vCPU on one CPU today).
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "emulate/pte_write.h"

namespace pte_write {

class DecodeCache {
 public:
  static constexpr unsigned kSlots = 64;  // a kernel has a handful of PTE-writing sites

  // The decoded form of the instruction at `rip` whose first `available` bytes are `bytes`,
  // or null. Counts a hit or a miss.
  const DecodedWrite* find(uint64_t rip, const uint8_t* bytes, size_t available);
  // Stores `write`, decoded from `bytes` (write.length of them are kept), replacing whatever
  // shared its slot.
  void insert(uint64_t rip, const uint8_t* bytes, const DecodedWrite& write);
  void clear();

  uint64_t hits() const { return hits_; }
  uint64_t misses() const { return misses_; }

 private:
  struct Slot {
    bool used = false;
    uint64_t rip = 0;
    uint8_t bytes[kMaxInstructionBytes]{};
    DecodedWrite write{};
  };
  static unsigned slot_index(uint64_t rip);
  static bool matches(const Slot& slot, uint64_t rip, const uint8_t* bytes, size_t available);

  Slot slots_[kSlots]{};
  uint64_t hits_ = 0;
  uint64_t misses_ = 0;
};

}  // namespace pte_write
