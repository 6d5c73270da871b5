#include "emulate/pte_emulation.h"
#include "domain/domain.h"
#include "domain/domain_mmu.h"
#include "emulate/decode_cache.h"
#include "emulate/instruction_fetch.h"
#include "emulate/pte_write.h"
#include "mm/entry_update.h"
#include "mm/table_access.h"
#include "memory/boot_memory.h"
#include "memory/machine.h"
#include "pv/guest_page_walk.h"

#ifndef PTE_DECODE_CACHE
#define PTE_DECODE_CACHE 1
#endif

namespace pte_emulation {
namespace {
// One CPU runs one vCPU today, so one cache and one set of counters; with SMP both become
// per-CPU (the cache is not locked).
constinit pte_write::DecodeCache decode_cache;
constinit bool cache_enabled = PTE_DECODE_CACHE != 0;
// Write-protected slots (decode_cache.h), the boot option instruction_cache=0|1.
constinit bool instruction_cache_enabled = true;
constinit Counters outcome_counters;

// Only the guest's 64-bit code segment is decoded as 64-bit code; a compat-mode user
// process (FLAT_RING3_CS32) would be misread, so it is not emulated.
bool runs_64bit_code(const TrapFrame& frame) { return (frame.cs & 0xffff) == FLAT_RING3_CS64; }

pte_write::SegmentBases segment_bases(const Vcpu& vcpu) {
  return {vcpu.fs_base, vcpu.active_gs_base()};
}

// The decoded instruction at frame.rip, from the cache or from Zydis; null if unsupported.
const pte_write::DecodedWrite* decoded_instruction(const instruction_fetch::FetchedInstruction& fetched,
                                                   uint64_t rip, pte_write::DecodedWrite& storage) {
  if (cache_enabled) {
    if (const pte_write::DecodedWrite* cached = decode_cache.find(rip, fetched.bytes, fetched.count))
      return cached;
  }
  const pte_write::DecodeResult decoded = pte_write::decode(fetched.bytes, fetched.count);
  if (decoded.status != pte_write::Status::ok) return nullptr;
  storage = decoded.write;
  if (cache_enabled) decode_cache.insert(rip, fetched.bytes, storage);
  return &storage;
}

pte_emulation::WalkGeneration walk_generation(const mm::FrameTable& frames) {
  return {frames.walk_generation(), frames.flush_clock().now()};
}

bool uses_protected_slots() { return cache_enabled && instruction_cache_enabled; }

// The decode of `rip` without its bytes, when its slot is write-protected and still valid.
const pte_write::DecodedWrite* protected_decode(const Vcpu& vcpu, uint64_t rip) {
  if (!uses_protected_slots()) return nullptr;
  const mm::FrameTable& frames = boot_memory::frame_table();
  return decode_cache.find_protected(vcpu.active_table_mfn(), rip, walk_generation(frames), frames.code_generation(),
                                     machine::frames());
}

// After a decode from fetched bytes: if the instruction lies in one frame of the domain's
// with no typed use (nothing can write it without the frame table noticing), mark the frame
// and let its slot answer without the bytes from now on.
void protect_decode(const Vcpu& vcpu, uint64_t rip, const pte_write::DecodedWrite& write) {
  if (!uses_protected_slots() || (rip & (mm::kPageBytes - 1)) + write.length > mm::kPageBytes) return;
  const GuestWalk walk = walk_guest(machine::frames(), vcpu.active_table_mfn(), rip, false);
  if (!walk.ok) return;
  mm::FrameTable& frames = boot_memory::frame_table();
  const mm::PageInfo* page = frames.find(walk.mfn);
  if (page == nullptr || page->owner != vcpu.domain->id || page->type_refs != 0) return;
  frames.note_decoded_code(walk.mfn);
  decode_cache.protect(vcpu.active_table_mfn(), rip, walk_generation(frames), frames.code_generation(),
                       walk.l1_entry_maddr, machine::frames());
}

// The caller promises a validated table of this level; check it anyway, since reading the
// entry of some other frame would read memory no MMU rule vouches for.
bool is_validated_table(mm::MmuContext& context, uint64_t table_mfn, unsigned level) {
  const mm::PageInfo* table = context.frames.find(table_mfn);
  return table != nullptr && table->is_validated_table() &&
         mm::level_number(mm::table_level(table->type)) == level;
}

Outcome count(Outcome outcome) {
  switch (outcome) {
    case Outcome::emulated: ++outcome_counters.emulated; break;
    case Outcome::refused: ++outcome_counters.refused; break;
    case Outcome::unsupported: ++outcome_counters.unsupported; break;
  }
  return outcome;
}
}  // namespace

Outcome emulate(Vcpu& vcpu, TrapFrame& frame, uint64_t address, uint64_t table_mfn, unsigned level) {
  if (vcpu.domain == nullptr || !runs_64bit_code(frame)) return count(Outcome::unsupported);
  pte_write::DecodedWrite storage;
  const pte_write::DecodedWrite* decoded = protected_decode(vcpu, frame.rip);
  if (decoded == nullptr) {
    instruction_fetch::FetchedInstruction fetched;
    if (!instruction_fetch::fetch(vcpu, frame.rip, fetched)) return count(Outcome::unsupported);
    decoded = decoded_instruction(fetched, frame.rip, storage);
    if (decoded == nullptr) return count(Outcome::unsupported);
    protect_decode(vcpu, frame.rip, *decoded);
  }

  mm::MmuContext context = domain_mmu::context(*vcpu.domain);
  if (!is_validated_table(context, table_mfn, level)) return count(Outcome::unsupported);
  const unsigned index = static_cast<unsigned>((address & (mm::kPageBytes - 1)) / pte_write::kEntryBytes);
  const mm::PageTableEntry old = mm::load_entry(context.frames, table_mfn, index);
  const pte_write::WriteResult result =
      pte_write::execute(*decoded, frame, segment_bases(vcpu), address, old.raw());
  if (result.status != pte_write::Status::ok) return count(Outcome::unsupported);

  if (result.writes) {
    // The guest's value is authoritative, as for a native store: A/D are not preserved.
    const int rc = mm::update_table_entry(context, table_mfn, index, mm::PageTableEntry(result.new_entry), false);
    if (rc != 0) return count(Outcome::refused);
    domain_mmu::apply_effects(context.effects);
  } else {
    ++outcome_counters.failed_cmpxchg;
  }
  pte_write::apply(result, frame);
  return count(Outcome::emulated);
}

void set_decode_cache_enabled(bool enabled) {
  cache_enabled = enabled;
  decode_cache.clear();
}
bool decode_cache_enabled() { return cache_enabled; }
void set_instruction_cache_enabled(bool enabled) {
  instruction_cache_enabled = enabled;
  decode_cache.clear();
}
bool instruction_cache_on() { return instruction_cache_enabled; }
uint64_t cache_hits() { return decode_cache.hits() + decode_cache.protected_hits(); }
uint64_t cache_protected_hits() { return decode_cache.protected_hits(); }
uint64_t cache_misses() { return decode_cache.misses(); }
const Counters& counters() { return outcome_counters; }

}  // namespace pte_emulation
