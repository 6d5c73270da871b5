// Brings up memory management at boot: the firmware memory map, the frame allocator, the
// frame table (one PageInfo per machine frame) and the read-only machine-to-phys table.
#pragma once
#include <stdint.h>
#include "memory/frame_allocator.h"
#include "arch/x86/boot/multiboot_info.h"
#include "mm/frame_table.h"
#include "mm/hypervisor_slots.h"
#include "mm/mmu_context.h"

namespace boot_memory {
struct Module {
  uint64_t start = 0, end = 0;  // physical
  char command_line[256] = {};
};
// dom0's kernel and initrd and a pair for each boot domU, as many as the domain table has
// slots (domain/domain.h: 32). Modules beyond are dropped with a message (modules_dropped).
constexpr unsigned max_modules = 64;

// Reads the memory map and modules (copying what is needed out of loader memory first).
bool init(const boot::MultibootInfo& info);
unsigned module_count();
unsigned modules_dropped();  // the loader gave more than max_modules
const Module& module(unsigned index);

boot::FrameAllocator& allocator();

// Set once at boot (init, seal_hypervisor_slots); read inline, since every fault and MMU
// hypercall reads them (an out-of-line call each was a tenth of a fast path's glue).
namespace detail {
extern mm::FrameTable* frames;
extern mm::MachToPhysTable machine_to_phys;
extern mm::HypervisorL4Slots slots;
}  // namespace detail
inline mm::FrameTable& frame_table() { return *detail::frames; }
inline mm::MachToPhysTable m2p() { return detail::machine_to_phys; }
// Valid after seal_hypervisor_slots().
inline const mm::HypervisorL4Slots& hypervisor_slots() { return detail::slots; }
// An M2P entry that maps no guest frame.
inline constexpr uint64_t invalid_m2p_entry = ~0ULL;
// Sets the M2P entry of `mfn` (nothing beyond the table).
inline void set_m2p(uint64_t mfn, uint64_t pfn) {
  mm::MachToPhysTable table = m2p();
  if (table.entries && mfn < table.nr_entries) table.entries[mfn] = pfn;
}
void seal_hypervisor_slots();
// This CPU's full TLB flush on the MMU's flush clock (mm/tlb_flush_clock.h): the clock ticks,
// CR3 is reloaded (nothing survives it: PGE is off, there are no PCIDs), then the CPU's flush
// is recorded with that tick.
void flush_tlb_this_cpu();
// Every CPU of `mask` makes that flush: this one directly, the others in a waited cross-CPU
// call (arch/x86/platform/cross_cpu). Returns when all have. Traced (trace/EVENTS.md): this
// CPU's FLUSH_IPI_SEND in its buffer, each other CPU's FLUSH_IPI_RECEIVE in its own.
void flush_tlb_cpus(CpuMask mask);
// Flushes the TLBs that may still hold a translation of a guest's frame that went back to the
// allocator (a stale translation of the domain that mapped it must not reach its next owner):
// the CPUs that have not flushed since, by the flush clock (Xen's flush at allocation by the
// page's tlbflush_timestamp). Whoever takes frames from allocator() for a new owner calls it
// first; allocate_frame does.
void before_reuse();
// A guest's frame no domain holds any more (the frame table released it; domain/ keeps the
// domains' side of that): its M2P entry invalidated, back to the allocator (which refuses, and
// keeps out of use, a frame that never was its own), and the TLB flushed before it is handed out
// again (before_reuse).
void free_guest_frame(uint64_t mfn);
// A zeroed frame owned by `owner` (DOMID_XEN for the hypervisor's own use), or 0.
uint64_t allocate_frame(domid_t owner);
// `count` zeroed frames from `first`, aligned on `alignment` frames, owned by nobody yet:
// false when no such run is free.
bool allocate_zeroed_run(uint64_t count, uint64_t alignment, uint64_t& first);
// Zeroes one free frame that is not known to be clean, for the idle loop (Xen's
// scrub_free_pages): allocation then finds it clean and need not zero it. False when every
// free frame is clean. The caller keeps interrupts off, so no frame is taken half scrubbed.
bool scrub_free_frame();
}  // namespace boot_memory
