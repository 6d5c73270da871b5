#include "relay/server/relay_mapping_table.h"

namespace lib::relay {
namespace {
constexpr uint32_t kGenerationMask = (1u << 24) - 1;
}

uint32_t MappingTable::count_of(uint16_t domid) const {
  uint32_t n = 0;
  for (const Mapping& m : mappings_)
    if (m.handle && m.domid == domid) ++n;
  return n;
}

MappingTable::Status MappingTable::reserve(uint16_t domid, uint32_t& slot) const {
  if (count_ == kMaxMappings) return Status::limit_total;
  if (count_of(domid) == kMaxPerDomain) return Status::limit_domain;
  for (uint32_t i = 0; i < kMaxMappings; ++i) {
    if (mappings_[i].handle) continue;
    slot = i;
    return Status::ok;
  }
  return Status::limit_total;  // unreachable: count_ < kMaxMappings leaves a slot free
}

uint32_t MappingTable::insert(uint32_t slot, uint16_t domid, uint64_t frame) {
  uint32_t generation = next_generation_[slot] & kGenerationMask;
  if (generation == 0) generation = 1;
  next_generation_[slot] = (generation + 1) & kGenerationMask;
  uint32_t handle = generation << kSlotBits | slot;
  mappings_[slot] = Mapping{handle, domid, frame};
  ++count_;
  return handle;
}

MappingTable::Status MappingTable::find(uint32_t handle, uint32_t& slot) const {
  uint32_t index = handle & ((1u << kSlotBits) - 1);
  if (handle == 0 || index >= kMaxMappings || mappings_[index].handle != handle) return Status::no_mapping;
  slot = index;
  return Status::ok;
}

void MappingTable::remove(uint32_t slot) {
  if (slot >= kMaxMappings || !mappings_[slot].handle) return;
  mappings_[slot] = Mapping{};
  --count_;
}

}  // namespace lib::relay
