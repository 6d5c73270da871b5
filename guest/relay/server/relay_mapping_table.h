#pragma once
// The dom0 relay's lasting foreign mappings (FOREIGN_MAP, tools/PROTOCOL.md "Lasting mappings"):
// frames of other domains the host keeps mapped writable in dom0, as Xen's backends
// (xenconsoled, xenstored) keep a domain's console and xenstore rings mapped for the domain's
// life, so that the ring holds a writable type and the domain can never make it a page table or
// a descriptor frame. The table decides which of its slots a mapping takes (the kernel maps the
// frame at that slot's page) and hands the host a handle for it: the slot and a generation, so a
// handle of a mapping that is gone never names a later one in its slot. Bounded: kMaxMappings in
// all, kMaxPerDomain of one domain. Pure.
#include <stdint.h>

namespace lib::relay {

class MappingTable {
 public:
  static constexpr uint32_t kMaxMappings = 128;  // pvhvd takes two per domU (31 at most)
  static constexpr uint32_t kMaxPerDomain = 8;

  struct Mapping {
    uint32_t handle = 0;  // 0: slot unused
    uint16_t domid = 0;
    uint64_t frame = 0;
  };
  enum class Status { ok, limit_total, limit_domain, no_mapping };

  // A free slot for a mapping of `domid`'s frame, or which limit is reached. Nothing changes
  // until insert().
  Status reserve(uint16_t domid, uint32_t& slot) const;
  // Records the mapping the kernel made at `slot` (one reserve() gave); returns its handle.
  uint32_t insert(uint32_t slot, uint16_t domid, uint64_t frame);
  // The slot of the mapping `handle` names, or no_mapping (never handed out, or unmapped).
  Status find(uint32_t handle, uint32_t& slot) const;
  // Forgets the mapping at `slot` (find() gave it).
  void remove(uint32_t slot);

  uint32_t count() const { return count_; }
  uint32_t count_of(uint16_t domid) const;
  const Mapping& slot(uint32_t index) const { return mappings_[index]; }

 private:
  static constexpr uint32_t kSlotBits = 8;
  static_assert(kMaxMappings <= 1u << kSlotBits);

  Mapping mappings_[kMaxMappings];
  // Per slot: the generation of its next mapping (24 bits, never 0, so no handle is 0).
  uint32_t next_generation_[kMaxMappings] = {};
  uint32_t count_ = 0;
};

}  // namespace lib::relay
