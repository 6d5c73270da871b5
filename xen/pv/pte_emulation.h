// The hypervisor side of page-table write emulation: a guest wrote to one of its page
// tables, which it can map read-only only; instead of bouncing the fault, perform the write
// as if the guest had asked with mmu_update (validated, counted), then let the guest go on
// after the instruction. The instruction semantics are pte_write's (pure, unit tested).
#pragma once
#include <stdint.h>
#include "arch/x86/cpu/trap_frame.h"
#include "mm/mmu_context.h"

struct Vcpu;

namespace pte_emulation {

enum class Outcome { emulated, refused, unsupported };

// The page table a write fault hit, as the fault path found it (pv/page_fault.cpp).
struct TableWrite {
  uint64_t table_mfn = 0;
  mm::PageInfo* table = nullptr;  // its frame-table entry: a validated table of the domain's (when found)
  mm::PageType type = mm::PageType::None;
  uint64_t mapping_entry_maddr = 0;  // the L1 entry that maps the faulting page
};

// The guest at frame.rip (a vCPU of a domain, in kernel mode) wrote `address` (CR2, error
// code had P and W set) and hit `write`'s table. Emulates the write: fetches the instruction
// from the guest's current address space, decodes it (through the decode cache), takes the
// table's frame lock (a validated table of that type, still the domain's: else unsupported),
// executes the instruction on the entry and commits it by compare-and-exchange in the domain's
// MMU context (emulate/pte_commit.h: a cmpxchg fails as the hardware's, the result is computed
// from the entry actually replaced), gives the lock back and carries out its effects
// (domain_mmu::apply_effects_untraced); on success applies the register and flag updates and
// advances rip.
// refused: the new entry failed validation (nothing changed); unsupported: not emulable
// (nothing changed either). The caller bounces the #PF to the guest in both cases.
Outcome emulate(Vcpu& vcpu, TrapFrame& frame, uint64_t address, const TableWrite& write);
// The same, tracing the effects (domain_mmu::apply_effects): for the fault path's traced copy.
Outcome emulate_traced(Vcpu& vcpu, TrapFrame& frame, uint64_t address, const TableWrite& write);

// The decode cache (one per CPU) is on unless built with PTE_DECODE_CACHE=0; it can be
// switched at boot, before the APs run guests (e.g. to measure what it saves). Switching clears
// every CPU's.
void set_decode_cache_enabled(bool enabled);
bool decode_cache_enabled();
// Write-protected decode-cache slots (bhyve's hw.vmm.instruction_cache; decode_cache.h):
// on unless the boot option instruction_cache=0; off, every hit compares the fetched bytes.
// Switching clears the cache.
void set_instruction_cache_enabled(bool enabled);
bool instruction_cache_on();
uint64_t cache_hits();  // both kinds
uint64_t cache_protected_hits();
uint64_t cache_misses();

}  // namespace pte_emulation
