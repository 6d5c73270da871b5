#include "pv/page_fault.h"
#include "arch/x86/cpu/registers.h"
#include "domain/domain.h"
#include "pv/pte_emulation.h"
#include "emulate/translation_cache.h"
#include "perf/perf_counters.h"
#include "memory/boot_memory.h"
#include "memory/machine.h"
#include "pv/rules/guest_page_walk.h"
#include "domain/adaptive_glue.h"
#include "domain/writable_page_tables_glue.h"
#include "trace/format/events.h"
#include "tracing/trace_buffers.h"

namespace page_fault {
namespace {
constexpr uint64_t error_present = 1, error_write = 2, error_reserved = 8;

using pte_emulation::TableWrite;

// The last table writes' walks (emulate/translation_cache.h), one cache per CPU as the decode
// cache (pv/pte_emulation.cpp): used by its CPU alone, and an entry is only served while the
// frame table's walk generation and the L1 entry it ended at are what they were, whichever CPU
// changed them.
struct alignas(64) CpuTranslationCache {
  pte_emulation::TranslationCache cache;
};
constinit CpuTranslationCache translation_caches[MAX_CPUS];

// What the walk of `address` finds, from the translation cache when nothing changed since.
bool translate(const Vcpu& vcpu, mm::FrameTable& frames, uint64_t address, pte_emulation::Translation& out) {
  const pte_emulation::TranslationKey key{vcpu.domain->id, vcpu.active_table_mfn(), address >> 12};
  const pte_emulation::WalkGeneration now = pte_emulation::WalkGeneration::of(frames);
  pte_emulation::TranslationCache& translation_cache = translation_caches[domains::scheduling_cpu()].cache;
  if (const pte_emulation::Translation* cached = translation_cache.find(key, now, frames.memory())) {
    out = *cached;
    return true;
  }
  GuestWalk walk = walk_guest(frames.memory(), key.l4_mfn, address, false);
  if (!walk.ok) return false;
  out = {walk.mfn, walk.l1_entry_maddr, frames.find(walk.mfn)};
  translation_cache.remember(key, now, out, frames.memory());
  return true;
}

// A write by the guest kernel through a read-only mapping of one of its own validated page
// tables: the only faults the PTE-write paths take over. Without a table when it is not one.
TableWrite find_table_write(const Vcpu& vcpu, uint64_t address) {
  mm::FrameTable& frames = boot_memory::frame_table();
  pte_emulation::Translation translation;
  if (!translate(vcpu, frames, address, translation)) return {};
  mm::PageInfo* page = translation.target;
  if (!page || page->owner() != vcpu.domain->id || !page->is_validated_table()) return {};
  // Only through a read-only leaf, as Xen's pv_ro_page_fault: a writable leaf faulted for a
  // read-only entry above it, a linear page table's (mm/linear_tables.h), whose window onto
  // the tables stays read-only: the guest's own #PF.
  if (mm::PageTableEntry(*machine::to_virtual<uint64_t>(translation.mapping_entry_maddr)).writable()) return {};
  // An L2-L4 table (ours emulates writes to them, Xen only to L1s) only through an L1's entry:
  // a write through a linear window onto a table (its leaf an L2-L4 entry) faults, as on Xen.
  const mm::PageInfo* leaf_table = frames.find(translation.mapping_entry_maddr >> 12);
  const mm::PageType type = page->type();
  if (type != mm::PageType::L1 && (!leaf_table || !leaf_table->has_type(mm::PageType::L1))) return {};
  return TableWrite{translation.target_mfn, page, type, translation.mapping_entry_maddr};
}

// Ours (Xen traces only the faults it bounces): the fault that starts an emulation or a
// detach, so the analyser pairs the two by address and table (trace/EVENTS.md).
void trace_pte_write_fault(const TrapFrame& frame, uint64_t address, uint64_t table_mfn) {
  trace::record_words(trace::events::kPteWriteFault, trace::low(frame.rip), trace::high(frame.rip), trace::low(address),
                      trace::high(address), trace::low(table_mfn), trace::high(table_mfn));
}

// Xen's record: the new entry, the address written and the instruction (64-bit words).
void trace_emulation(const TrapFrame& frame, uint64_t address, uint64_t table_mfn) {
  const uint64_t entry = *machine::to_virtual<uint64_t>((table_mfn << 12) | (address & 0xff8));
  trace::record_words(trace::events::kPvPtwrEmulation, trace::low(entry), trace::high(entry), trace::low(address),
                      trace::high(address), trace::low(frame.rip), trace::high(frame.rip));
}

template <bool traced>
[[gnu::always_inline]] inline pte_emulation::Outcome emulate(Vcpu& vcpu, TrapFrame& frame, uint64_t address,
                                                             const TableWrite& write) {
  return traced ? pte_emulation::emulate_traced(vcpu, frame, address, write)
                : pte_emulation::emulate(vcpu, frame, address, write);
}

// The fault taken over: a detach (writable pagetables) or an emulation. Built twice: untraced
// for the fault path, and `traced`, out of line, for the one trace site in fixup, which writes
// every record of the path in the order they happen (the fault, whatever the detach or the
// reattach of detached tables records, the effects' flush, the emulation). So tracing off
// costs the emulated write that site's NOP and nothing more.
template <bool traced>
bool take_over(Vcpu& vcpu, TrapFrame& frame, uint64_t address, const TableWrite& write) {
  if constexpr (traced) trace_pte_write_fault(frame, address, write.table_mfn);
  Domain& domain = *vcpu.domain;
  if (write.type == mm::PageType::L1 && adaptive_ptwr::wants_detach(domain, write.table_mfn) &&
      writable_page_tables::detach(vcpu, {write.table_mfn, write.mapping_entry_maddr, address, frame.rip, frame.rsp}))
    return true;
  // An MMU operation (the emulated write must see every detached table's entries validated
  // first; where counted, no table is detached while it runs, since it may link one).
  const pte_emulation::Outcome outcome =
      writable_page_tables::run_mmu_operation(domain, [&] { return emulate<traced>(vcpu, frame, address, write); });
  if (outcome != pte_emulation::Outcome::emulated) {
    perf::add(perf::Counter::ptwr_emulation_refusals);
    return false;
  }
  perf::add(perf::Counter::ptwr_emulations);
  if constexpr (traced) trace_emulation(frame, address, write.table_mfn);
  return true;
}

[[gnu::noinline, gnu::cold]] bool take_over_traced(Vcpu& vcpu, TrapFrame& frame, uint64_t address,
                                                   const TableWrite& write) {
  return take_over<true>(vcpu, frame, address, write);
}
}  // namespace

namespace {
// Xen's spurious_page_fault, for a domain on several CPUs: another vCPU's CPU made the entry
// writable (a detach forges the mapping of the detached table writable, and invalidates it on
// its own CPU only), and this CPU's TLB still held it read-only. When the walk now allows the
// write at every level the stale entry is dropped and the store retried; otherwise it is the
// guest's fault.
[[gnu::noinline]] bool spurious_write(Vcpu& vcpu, uint64_t address) {
  if (!writable_page_tables::on_several_cpus(*vcpu.domain)) return false;
  const GuestWalk walk = walk_guest(boot_memory::frame_table().memory(), vcpu.active_table_mfn(), address, true);
  if (!walk.ok) return false;
  cpu::invlpg(address);
  return true;
}
}  // namespace

bool fixup(Vcpu& vcpu, TrapFrame& frame, uint64_t address) {
  if (!(frame.error_code & error_present)) {
    // A touch of an unhooked range: reattach and let the guest retry. A fault that was not
    // caused by the unhook faults again and is bounced then.
    return writable_page_tables::reattach_unhooked(*vcpu.domain);
  }
  if (!(frame.error_code & error_write) || !vcpu.kernel_mode || !vcpu.domain->takes_table_writes()) return false;
  const TableWrite write = find_table_write(vcpu, address);
  // (Not a fault on a reserved bit: the walk does not look at those, the retry would fault again.)
  if (write.table == nullptr) [[unlikely]]
    return !(frame.error_code & error_reserved) && spurious_write(vcpu, address);
  if (trace_points::on()) [[unlikely]]
    return take_over_traced(vcpu, frame, address, write);
  return take_over<false>(vcpu, frame, address, write);
}
}  // namespace page_fault
