#pragma once
// Shared by the fuzzer's kernel files (fuzz.cpp: the campaign; fuzz_setup.cpp: the pool and its
// teardown; fuzz_exec.cpp: running one operation; fuzz_check.cpp: the check of its own tables).
#include <stdint.h>

#include "kernel/boot/boot_info.h"
#include "kernel/memory/physical_memory.h"
#include "arch/trap_frame.h"
#include "fuzz/generator/fuzz_model.h"

extern "C" {
long fuzz_try(long (*probe)(uint64_t, uint64_t, uint64_t), uint64_t a, uint64_t b, uint64_t c);
extern volatile uint8_t fuzz_try_active, fuzz_try_faulted;
extern uint64_t fuzz_flags_after;
extern char fuzz_try_recovery[], fuzz_iret_landing[];
}

namespace kernel::fuzz {

using lib::fuzz::Op;
using lib::fuzz::Options;
using lib::fuzz::Pool;

struct Stats {
  uint64_t ops = 0;
  uint64_t calls = 0, call_errors = 0;
  uint64_t faults = 0;     // traps a probe took and recovered from
  uint64_t continued = 0;  // single-step and alignment traps let through
  uint64_t stores = 0, store_faults = 0, stores_skipped = 0;
  uint64_t loads = 0, load_faults = 0;
  uint64_t irets = 0, iret_faults = 0;
  uint64_t rejected = 0;  // operations the rule check refused to run (a generator bug)
  uint64_t audits = 0, audit_mismatches = 0, audits_missed = 0;
  uint64_t oracle_violations = 0;
  uint64_t protected_changes = 0;
  uint64_t slow_ops =
      0;  // operations that took more than 200 ms  // protected entries found changed after an operation
  uint64_t unexpected = 0;  // traps of ours the hypervisor should not have caused
  // The hv_frames and destroy classes: what took effect (so a campaign shows it reached them).
  uint64_t hv_typed = 0;         // frames the hypervisor writes that took a table or GDT type
  uint64_t hv_compared = 0;      // ... compared with their snapshot after a write
  uint64_t domains_created = 0;  // destroy class: createdomain that succeeded (recreations too)
  uint64_t destroys = 0;         // destroydomain that succeeded
  uint64_t racing_calls = 0;     // calls for the domain run from the timer during a destroy
  uint64_t dead_calls = 0;       // calls for it after its destroy (all must fail)
  uint64_t recreations = 0;      // ids created again and checked
  uint64_t barriers_missed = 0;  // fuzz_vcpus: a vCPU that did not finish its segment in time
};

// What the other vCPUs' streams did (fuzz_smp.cpp): answers[0] counts 0, answers[e] -e, the
// last bucket anything else.
constexpr unsigned kAnswerBuckets = 128;
struct RacerStats {
  uint64_t ops = 0, errors = 0;
  uint64_t illegal = 0;   // answers that are not Xen's (and local flushes that failed)
  uint64_t rejected = 0;  // operations the rule check refused (a generator bug)
  uint64_t other = 0;     // operations of another class (all classes left out): not run
  uint64_t skipped = 0;   // batches that write a direct-map slot of a scratch frame: not run
  uint64_t answers[kAnswerBuckets] = {};
};

// The last trap a probe took.
struct TrapRecord {
  uint64_t vector, error_code, rip, cr2;
};

struct Campaign {
  Pool pool;
  Options options;
  Stats stats;
  TrapRecord last_trap{};
  // Where the kernel reads the direct-map L1 slot of each scratch frame (same indexing as
  // Pool::direct_map_slot_ma), and the pseudo-physical frame of each (the M2P of scratch
  // frames is fuzzed: these are the truth).
  volatile uint64_t* direct_map_slot_va[lib::fuzz::kMaxTables + lib::fuzz::kMaxData] = {};
  uint64_t table_pfn[lib::fuzz::kMaxTables] = {};
  uint64_t data_pfn[lib::fuzz::kMaxData] = {};
  // Where the kernel reads each protected slot (Pool::protected_slots): checked after every
  // operation, since only a hypervisor that accepted what it must refuse can change one.
  volatile uint64_t* protected_slot_va[lib::fuzz::kMaxProtectedSlots] = {};
  uint64_t kernel_l4_va = 0;
  uint64_t kernel_slot_value = 0;  // the kernel L4's slot 511, which the clones share
  uint64_t iret_stack_top = 0;     // the iret probes' landing stack (window pages)
  uint8_t* work = nullptr;         // window pages for the checks and the log
  uint64_t work_size = 0;
  uint64_t shared_info_mfn = 0;
  uint64_t nr_pages = 0;
  bool own_runs_complete = false;  // pool.own_runs hold all our memory
  uint32_t vm_assists_touched = 0;
  uint32_t timer_port = 0;  // the kernel's VIRQ_TIMER port (the destroy class borrows it)
};

extern Campaign campaign;

// Setup and teardown (fuzz_setup.cpp). teardown returns the number of scratch frames it could
// not give back (still typed: left out of the allocator).
bool setup(Campaign& c);
uint64_t teardown(Campaign& c);
// The scratch tables back towards the tree setup built (a step of some ptwrite operations).
void rebuild(Campaign& c);
// Window pages (the kernel's last 8 MiB, its own L1): a new frame, or a given one, mapped there.
uint64_t map_window_page(uint64_t va, uint64_t flags);
void map_window_frame(uint64_t va, uint64_t mfn, uint64_t flags);
constexpr uint64_t kWindowVa = kVirtBase + (1ull << 30) - (8ull << 20);
// The frames the hypervisor writes for us (fuzz_hv.cpp): the pool's hv_frames, their read-only
// views and snapshot pages in the window; undone by teardown_hv_frames.
void setup_hv_frames(Campaign& c);
void teardown_hv_frames(Campaign& c);
// The two classes of fuzz/generator/fuzz_generate_hv.cpp (fuzz_hv.cpp, fuzz_destroy.cpp).
void execute_hv_frames(Campaign& c, const Op& op);
void execute_destroy(Campaign& c, const Op& op);
// Where the destroy class maps a frame of the domain it destroys (two window pages).
constexpr uint64_t kHoldVa = kWindowVa + 0x5000, kForeignVa = kWindowVa + 0x6000;

// fuzz_vcpus=<n> (fuzz_smp.cpp): the other vCPUs brought up (before setup, so their event
// channels are the kernel's protected ones), their pools prepared (after it), a segment of
// operations handed to each, the barrier where vCPU 0 waits for them, and their totals.
bool smp_start(Campaign& c);
void smp_prepare(Campaign& c);
void smp_post(uint64_t first, uint64_t count);
void smp_barrier(Campaign& c, uint64_t op);
unsigned smp_vcpus();
RacerStats smp_totals();
void smp_report(Campaign& c);

// One operation (fuzz_exec.cpp), and the state it may have changed put back.
void execute(Campaign& c, const Op& op);
void restore(Campaign& c, uint32_t what);
// Any MMU hypercall: the hypervisor reattaches detached tables, so what they hold is validated.
void settle();

// The guest-side check of its own address space (fuzz_check.cpp): violations found (each
// printed, the first few in detail).
uint64_t check_tables(Campaign& c, uint64_t op);
// The kernel's own page tables against their state at the start (everything but the slots the
// fuzzer owns): `count` entries from where the last check stopped; changes are printed, counted
// as protected changes and put back.
void snapshot_kernel_tables(Campaign& c);
uint64_t check_kernel_tables(Campaign& c, uint64_t op, unsigned count);

// Reading frames: the virtual address through which frame `mfn` can be read now (0 if none).
uint64_t readable_va(const Campaign& c, uint64_t mfn);
// The frame the kernel's direct map maps at a scratch frame's address, read from its L1 slot.
uint64_t direct_map_target(const Campaign& c, unsigned slot_index);
// The leaf entry that maps `va` in the current kernel address space (0 if none; superpages
// and unreadable tables end the walk too).
uint64_t leaf_entry(const Campaign& c, uint64_t va);

}  // namespace kernel::fuzz
