// Remembers decoded page-table-writing instructions so a guest that writes PTEs from the
// same few instructions (set_pte, ptep_get_and_clear, ...) skips Zydis after the first time.
//
// Keyed by the guest RIP and validated by the instruction bytes themselves: a slot stores the bytes it was decoded
// from and matches only if the guest's current bytes are the same. Since decoding is a pure
// function of those bytes (DecodedWrite holds no address or register value), a byte match
// makes a stale entry impossible whatever the guest did to its code or its mappings in the
// meantime: self-modifying code, a remapped code page or a reused frame all just miss.
// (The hypervisor cannot see guest writes to code it maps writable; for code it does not,
// see the write-protected slots below.)
//
// Write-protected slots (bhyve's instruction cache, `hw.vmm.instruction_cache`): once a slot's
// instruction lies in one frame of the domain's that has no typed use (no writable mapping
// anywhere, not a table the writable-pagetable path could detach), the glue marks the frame
// (PageInfo::decoded_code) and the slot also answers `find_protected` without the bytes:
// for the same address space (L4), while the walk of RIP's page still ends at the same L1
// entry with the same value (WalkStamp, translation_cache.h) and the frame table's code
// generation stands. The generation ticks when a marked frame takes a type (gains a writable
// mapping, becomes a table) or is freed: nothing else can change the bytes, since every
// guest write to memory goes through a writable mapping, which takes the Writable type.
// So the fault path skips fetching and comparing the bytes; a miss falls back to them.
//
// Two-way set-associative: a RIP hashes to a set of two slots; a new decode takes the first
// slot and pushes the set's other one out. Direct-mapped (one slot per set), whether two hot
// sites shared a slot, and so missed on every alternate write, depended on where the linker
// put the guest kernel's code: a reorganisation of the reference kernel's sources cost
// emulate-mode fork+exit 12% that way (two Zydis decodes per fork). Two ways keep any two
// sites of one set. One instance per physical CPU (pv/pte_emulation), used by that CPU alone:
// it is not locked, and what it answers depends only on state every CPU changes atomically.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "emulate/pte_write.h"
#include "emulate/translation_cache.h"

namespace pte_write {

class DecodeCache {
 public:
  static constexpr unsigned kSets = 64;  // a kernel has a handful of PTE-writing sites
  static constexpr unsigned kWays = 2;
  static constexpr unsigned kSlots = kSets * kWays;

  // The decoded form of the instruction at `rip` whose first `available` bytes are `bytes`,
  // or null. Counts a hit or a miss.
  const DecodedWrite* find(uint64_t rip, const uint8_t* bytes, size_t available);
  // Stores `write`, decoded from `bytes` (write.length of them are kept), in the first slot of
  // its set: the slot that held `rip` is replaced, else the set's older entry is dropped.
  void insert(uint64_t rip, const uint8_t* bytes, const DecodedWrite& write);
  void clear();

  // The decoded form of the instruction at `rip` in address space `l4_mfn` if its slot is
  // write-protected and nothing changed since (see above), else null. Counts a hit only.
  // Inline: every emulated write after an instruction's first asks.
  const DecodedWrite* find_protected(uint64_t l4_mfn, uint64_t rip, pte_emulation::WalkGeneration walks,
                                     uint64_t code_generation, const mm::MachineMemory& memory) {
    const Slot* set = set_of(rip);
    for (unsigned way = 0; way < kWays; ++way) {
      const Slot& slot = set[way];
      // Only protect() sets write_protected, on a used slot; insert() and clear() drop it.
      if (!slot.write_protected || slot.rip != rip) continue;
      if (slot.l4_mfn != l4_mfn || slot.code_generation != code_generation || !slot.code_walk.holds(walks, memory))
        return nullptr;
      ++protected_hits_;
      return &slot.write;
    }
    return nullptr;
  }
  // Makes the slot holding `rip` write-protected: the caller found RIP's page mapped by the
  // L1 entry at `mapping_entry_maddr` (a walk of `l4_mfn` just now) to a frame it marked.
  void protect(uint64_t l4_mfn, uint64_t rip, pte_emulation::WalkGeneration walks, uint64_t code_generation,
               uint64_t mapping_entry_maddr, const mm::MachineMemory& memory);

  uint64_t hits() const { return hits_; }
  uint64_t protected_hits() const { return protected_hits_; }
  uint64_t misses() const { return misses_; }

 private:
  struct Slot {
    bool used = false;
    uint64_t rip = 0;
    uint8_t bytes[kMaxInstructionBytes]{};
    DecodedWrite write{};
    // Write-protected validity: set by protect, dropped by insert.
    bool write_protected = false;
    uint64_t l4_mfn = 0;
    uint64_t code_generation = 0;
    pte_emulation::WalkStamp code_walk{};
  };
  static unsigned set_index(uint64_t rip) {
    // Fibonacci hashing spreads nearby RIPs (several PTE writes in one function) over sets.
    return static_cast<unsigned>((rip * 0x9e3779b97f4a7c15ULL) >> 58) % kSets;
  }
  Slot* set_of(uint64_t rip) { return &slots_[set_index(rip) * kWays]; }
  const Slot* set_of(uint64_t rip) const { return &slots_[set_index(rip) * kWays]; }
  static bool matches(const Slot& slot, uint64_t rip, const uint8_t* bytes, size_t available);

  Slot slots_[kSlots]{};
  uint64_t hits_ = 0;
  uint64_t protected_hits_ = 0;
  uint64_t misses_ = 0;
};

}  // namespace pte_write
