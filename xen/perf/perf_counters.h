// Software performance counters, Xen's "perfc": named event counts that dom0 reads with
// XEN_SYSCTL_perfc_op (and the summary prints). They are what the fork benchmarks report per
// operation for each page-table write path.
#pragma once
#include <stdint.h>

namespace perf {
enum class Counter : unsigned {
  hypercalls,
  mmu_hypercalls,                // mmu_update, mmuext_op, update_va_mapping (multicall entries included)
  pv_page_faults,                // page faults taken while a PV guest ran
  bounced_exceptions,            // exceptions delivered through the guest's trap table
  events_delivered,              // event upcalls
  ptwr_emulations,               // guest page-table writes emulated
  ptwr_emulation_refusals,       // emulated writes refused by the page-type rules or not emulable
  ptwr_faults,                   // write faults taken by the writable-pagetable path (detaches)
  ptwr_unhooks,                  // L1s disconnected from their L2 slot
  ptwr_rehooks,                  // L1s reconnected after re-validation
  ptwr_revalidated,              // entries re-validated at reconnect (those that changed)
  tlb_flushes,                   // full TLB flushes (CR3 reloads) done for guests
  tlb_invlpgs,                   // single-page invalidations done for guests
  sched_ctx,                     // context switches between vCPUs, idle included (Xen's name)
  sched_preempt,                 // of which forced by the end of a time slice
  hypercall_continuations,       // hypercalls stopped part way to let an interrupt in (re-executed)
  cr3_writes,                    // CR3 loads for guests: address-space switches and full flushes
  guest_syscalls,                // system calls of guest user code bounced to the guest kernel
  type_change_flushes,           // of tlb_flushes, those done only because a frame changed type
  frames_scrubbed_idle,          // free frames zeroed while the CPU was idle (boot_memory::scrub_free_frame)
  frames_zeroed_when_allocated,  // frames handed out zeroed that were not scrubbed yet
  count
};

// Counting and reading are inline: the hot paths (every trap, every emulated write) count
// several events, and the adaptive policy reads three on every write fault.
namespace detail {
extern uint64_t values[unsigned(Counter::count)];
}
inline void add(Counter counter, uint64_t n = 1) { detail::values[unsigned(counter)] += n; }
inline uint64_t value(Counter counter) { return detail::values[unsigned(counter)]; }
const char* name(Counter counter);
void reset();
}  // namespace perf
