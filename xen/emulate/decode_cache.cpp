#include "emulate/decode_cache.h"

namespace pte_write {

bool DecodeCache::matches(const Slot& slot, uint64_t rip, const uint8_t* bytes, size_t available) {
  if (!slot.used || slot.rip != rip) return false;
  // The guest must still have every byte the decode consumed, unchanged.
  if (available < slot.write.length) return false;
  for (unsigned i = 0; i < slot.write.length; ++i)
    if (slot.bytes[i] != bytes[i]) return false;
  return true;
}

const DecodedWrite* DecodeCache::find(uint64_t rip, const uint8_t* bytes, size_t available) {
  const Slot* set = set_of(rip);
  for (unsigned way = 0; way < kWays; ++way) {
    if (!matches(set[way], rip, bytes, available)) continue;
    ++hits_;
    return &set[way].write;
  }
  ++misses_;
  return nullptr;
}

void DecodeCache::insert(uint64_t rip, const uint8_t* bytes, const DecodedWrite& write) {
  if (write.length == 0 || write.length > kMaxInstructionBytes) return;
  static_assert(kWays == 2, "the older entry is the second slot");
  Slot* set = set_of(rip);
  // Other code at the same RIP in the first slot is replaced there; otherwise the first slot's
  // entry moves to the second, dropping what it held (the older entry, or this RIP's old decode:
  // a RIP is never in both).
  if (!(set[0].used && set[0].rip == rip)) set[1] = set[0];
  Slot& slot = set[0];
  slot.used = true;
  slot.write_protected = false;
  slot.rip = rip;
  for (unsigned i = 0; i < write.length; ++i) slot.bytes[i] = bytes[i];
  slot.write = write;
}

void DecodeCache::protect(uint64_t l4_mfn, uint64_t rip, pte_emulation::WalkGeneration walks, uint64_t code_generation,
                          uint64_t mapping_entry_maddr, const mm::MachineMemory& memory) {
  Slot* set = set_of(rip);
  for (unsigned way = 0; way < kWays; ++way) {
    Slot& slot = set[way];
    if (!slot.used || slot.rip != rip) continue;
    slot.write_protected = slot.code_walk.take(walks, mapping_entry_maddr, memory);
    slot.l4_mfn = l4_mfn;
    slot.code_generation = code_generation;
    return;
  }
}

void DecodeCache::clear() {
  for (Slot& slot : slots_) slot.used = slot.write_protected = false;
  hits_ = 0;
  protected_hits_ = 0;
  misses_ = 0;
}

}  // namespace pte_write
