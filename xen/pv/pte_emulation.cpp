#include "pv/pte_emulation.h"
#include "domain/domain.h"
#include "domain/domain_mmu.h"
#include "emulate/decode_cache.h"
#include "pv/instruction_fetch.h"
#include "emulate/pte_commit.h"
#include "emulate/pte_write.h"
#include "mm/entry_update_inline.h"
#include "mm/table_access.h"
#include "memory/boot_memory.h"
#include "memory/machine.h"
#include "pv/rules/guest_page_walk.h"

#ifndef PTE_DECODE_CACHE
#define PTE_DECODE_CACHE 1
#endif

namespace pte_emulation {
namespace {
// Each CPU decodes for the vCPU it runs, into a cache of its own (issue 30, item 6): nothing
// of it is shared, so nothing of it is locked, and no CPU waits for another to decode. A slot
// filled on one CPU is judged on that CPU alone, by what every CPU changes atomically and in
// the guest's memory: the instruction bytes, or (write-protected slots) the frame table's walk
// and code generations and the L1 entry mapping RIP's page (decode_cache.h). Another vCPU that
// rewrites the code (the frame takes a type: the code generation ticks), relinks a table (the
// walk generation ticks) or remaps the page (the entry reads differently) has invalidated the
// slot before this CPU's next look at it. A vCPU that moves meets the caches of its new CPU,
// held to the same tests. selftest=emulation-caches-smp fills them on one CPU and changes the
// guest's code and tables from another.
struct alignas(64) CpuDecodeState {
  pte_write::DecodeCache cache;
  // Where a decode that did not come from the cache is kept (with the cache off, or when the
  // instruction's slot could not take it): one emulation at a time per CPU.
  pte_write::DecodedWrite uncached;
};
constinit CpuDecodeState decode_states[MAX_CPUS];
CpuDecodeState& here() { return decode_states[domains::scheduling_cpu()]; }
constinit bool cache_enabled = PTE_DECODE_CACHE != 0;
// Write-protected slots (decode_cache.h), the boot option instruction_cache=0|1.
constinit bool instruction_cache_enabled = true;
// cache_enabled && instruction_cache_enabled, kept by the two setters: one test per fault.
constinit bool protected_slots_on = PTE_DECODE_CACHE != 0;

// Only the guest's 64-bit code segment is decoded as 64-bit code; a compat-mode user
// process (FLAT_RING3_CS32) would be misread, so it is not emulated.
bool runs_64bit_code(const TrapFrame& frame) { return (frame.cs & 0xffff) == FLAT_RING3_CS64; }

pte_write::SegmentBases segment_bases(const Vcpu& vcpu) { return {vcpu.fs_base, vcpu.active_gs_base()}; }

// The decoded instruction at frame.rip, from the cache or from Zydis; null if unsupported.
const pte_write::DecodedWrite* decoded_instruction(const instruction_fetch::FetchedInstruction& fetched, uint64_t rip) {
  CpuDecodeState& state = here();
  if (cache_enabled) {
    if (const pte_write::DecodedWrite* cached = state.cache.find(rip, fetched.bytes, fetched.count)) return cached;
  }
  const pte_write::DecodeResult decoded = pte_write::decode(fetched.bytes, fetched.count);
  if (decoded.status != pte_write::Status::ok) return nullptr;
  state.uncached = decoded.write;
  if (cache_enabled) state.cache.insert(rip, fetched.bytes, state.uncached);
  return &state.uncached;
}

bool uses_protected_slots() { return protected_slots_on; }

// The decode of `rip` without its bytes, when its slot is write-protected and still valid.
[[gnu::always_inline]] inline const pte_write::DecodedWrite* protected_decode(const Vcpu& vcpu, uint64_t rip,
                                                                              const mm::FrameTable& frames) {
  if (!uses_protected_slots()) return nullptr;
  return here().cache.find_protected(vcpu.active_table_mfn(), rip, pte_emulation::WalkGeneration::of(frames),
                                     frames.code_generation(), frames.memory());
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
  if (page == nullptr || page->owner() != vcpu.domain->id || page->type_refs() != 0) return;
  // A writable mapping dropped since the last full flush may still be in the TLB: the guest
  // could rewrite the bytes through it without the frame taking a type (the generation would
  // not tick). Trusted without the bytes only once no such translation can be left.
  if (frames.flush_clock().may_hold(page->stamp())) return;
  frames.note_decoded_code(walk.mfn);
  here().cache.protect(vcpu.active_table_mfn(), rip, pte_emulation::WalkGeneration::of(frames),
                       frames.code_generation(), walk.l1_entry_maddr, machine::frames());
}

// The decode of the instruction at frame.rip from its bytes (fetched from the guest), which
// then write-protects its slot where it can; null if it cannot be emulated. Out of line: the
// write-protected slot answers every write after the first of each instruction.
[[gnu::noinline]] const pte_write::DecodedWrite* decode_from_bytes(const Vcpu& vcpu, const TrapFrame& frame) {
  instruction_fetch::FetchedInstruction fetched;
  if (!instruction_fetch::fetch(vcpu, frame.rip, fetched)) return nullptr;
  const pte_write::DecodedWrite* decoded = decoded_instruction(fetched, frame.rip);
  if (decoded != nullptr) protect_decode(vcpu, frame.rip, *decoded);
  return decoded;
}

// The hardware set Accessed or Dirty in the entry between its read and the store: the
// instruction is executed again on the entry as it is now (emulate/pte_commit.h).
[[gnu::noinline]] int execute_again(const Vcpu& vcpu, mm::MmuContext& context, const TrapFrame& frame, uint64_t address,
                                    const pte_write::DecodedWrite& decoded, const mm::LockedTable& table,
                                    unsigned index, pte_write::WriteResult& result) {
  return pte_write::execute_again(context, table, index, decoded, frame, segment_bases(vcpu), address, result);
}

// Both entry points in one body: the context is built and its effects carried out here, so
// the hot path has one frame; `traced` only decides whether the effects are traced.
template <bool traced>
[[gnu::always_inline]] inline Outcome emulate_write(Vcpu& vcpu, TrapFrame& frame, uint64_t address,
                                                    const TableWrite& write) {
  if (!runs_64bit_code(frame)) return Outcome::unsupported;
  const pte_write::DecodedWrite* decoded = protected_decode(vcpu, frame.rip, boot_memory::frame_table());
  if (decoded == nullptr) decoded = decode_from_bytes(vcpu, frame);
  if (decoded == nullptr) return Outcome::unsupported;

  mm::MmuContext& context = domain_mmu::reused_context(*vcpu.domain);
  // The caller found a validated table of this type; reattaching detached tables since, or
  // another CPU, may have changed that, and reading the entry of some other frame would read
  // memory no MMU rule vouches for. Locked, it stays what it is now: checked once more, type
  // and owner.
  mm::PageInfo& table = *write.table;  // context.frames.info(write.table_mfn)
  if (!mm::lock_table(table, write.type, vcpu.domain->id)) return Outcome::unsupported;
  const unsigned index = static_cast<unsigned>((address & (mm::kPageBytes - 1)) / pte_write::kEntryBytes);
  const mm::PageTableEntry old = mm::load_entry(context.frames, write.table_mfn, index);
  pte_write::WriteResult result = pte_write::execute(*decoded, frame, segment_bases(vcpu), address, old.raw());
  // A cmpxchg that found another value writes nothing (and has no effects to carry out). The
  // guest's value is authoritative, as for a native store: A/D are not preserved.
  int rc = 0;
  if (result.status == pte_write::Status::ok && result.writes) {
    const mm::LockedTable locked{write.table_mfn, table, mm::table_level(write.type)};
    rc = pte_write::commit(context, locked, index, result, old);
    if (rc == mm::kEntryChanged) [[unlikely]]
      rc = execute_again(vcpu, context, frame, address, *decoded, locked, index, result);
  }
  mm::unlock_table(context.frames, write.table_mfn, table);
  if (result.status != pte_write::Status::ok) return Outcome::unsupported;
  if (rc != 0) return Outcome::refused;
  if (result.writes) {
    if constexpr (traced) {
      domain_mmu::apply_effects(context.effects);
    } else {
      domain_mmu::apply_effects_untraced(context.effects);
    }
  }
  pte_write::apply(result, frame);
  return Outcome::emulated;
}
}  // namespace

Outcome emulate(Vcpu& vcpu, TrapFrame& frame, uint64_t address, const TableWrite& write) {
  return emulate_write<false>(vcpu, frame, address, write);
}

Outcome emulate_traced(Vcpu& vcpu, TrapFrame& frame, uint64_t address, const TableWrite& write) {
  return emulate_write<true>(vcpu, frame, address, write);
}

namespace {
// The setters run at boot, before any AP runs a guest: no CPU is using its cache meanwhile.
void clear_every_cache() {
  for (CpuDecodeState& state : decode_states) state.cache.clear();
}
template <typename Count>
uint64_t sum(Count count) {
  uint64_t total = 0;
  for (const CpuDecodeState& state : decode_states) total += count(state.cache);
  return total;
}
}  // namespace

void set_decode_cache_enabled(bool enabled) {
  cache_enabled = enabled;
  protected_slots_on = cache_enabled && instruction_cache_enabled;
  clear_every_cache();
}
bool decode_cache_enabled() { return cache_enabled; }
void set_instruction_cache_enabled(bool enabled) {
  instruction_cache_enabled = enabled;
  protected_slots_on = cache_enabled && instruction_cache_enabled;
  clear_every_cache();
}
bool instruction_cache_on() { return instruction_cache_enabled; }
// Every CPU's counts (each CPU adds to its own; a sum read meanwhile may lag by a write).
uint64_t cache_hits() {
  return sum([](const pte_write::DecodeCache& cache) { return cache.hits() + cache.protected_hits(); });
}
uint64_t cache_protected_hits() {
  return sum([](const pte_write::DecodeCache& cache) { return cache.protected_hits(); });
}
uint64_t cache_misses() {
  return sum([](const pte_write::DecodeCache& cache) { return cache.misses(); });
}

}  // namespace pte_emulation
