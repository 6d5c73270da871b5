// ptwr=adaptive: per L1 table, which PTE-write path a guest kernel's write fault takes.
// Pure logic, no hardware: the fault path asks it (domain/adaptive_glue), the writable path tells
// it what each detach period changed.
//
// Why: a detach (writable pagetables) costs a fixed price (unhook, a 512-entry snapshot, the
// diff and the rehook) and then any number of writes are native; an emulation costs one fault
// and one emulated store per write. Runs of writes (fork copying and write-protecting a table,
// munmap zapping it) pay off detached; sparse writes (demand paging: one entry per fault, the
// guest back in user mode between two of them) do not, and under `ptwr=writable` each becomes a
// whole unhook/rehook cycle for a single changed entry (65,572 of them in one `make run` trace).
//
// The rule, per table:
// - A table starts detaching (what writable does).
// - A detach period that changed at most kFewEntries entries did not pay; after kSparsePeriods
//   such periods in a row the table's writes are emulated.
// - While emulated, kRunLength writes to the table with no other guest activity between them
//   (the caller's activity count unchanged: no hypercall, no bounced exception or system call)
//   are a run, and the table detaches again at the write that completes it.
// Both thresholds are the hysteresis: a single odd period or a couple of quick writes do not
// flip a table back and forth.
//
// Where the state lives: a small direct-mapped table per domain, indexed by the L1's frame
// number, fixed at the domain's creation (no allocation per fault). A frame that maps to a slot
// another table holds starts over as a new table. Whatever the state says, both paths are
// safe (each keeps its own rules: writable's detach may still decline, and the write is then
// emulated), so a stale or lost entry costs time, never correctness.
#pragma once
#include <stdint.h>

namespace ptwr {

enum class AdaptivePath : uint8_t { detach, emulate };

// A change of path of one table, for the trace (PTWR_ADAPTIVE) and the log.
enum class AdaptiveSwitch : uint8_t {
  none = 0,
  to_emulate = 1,  // its last detach periods changed few entries: its writes are sparse
  to_detach = 2,   // a run of emulated writes with nothing else between them
};

struct AdaptiveDecision {
  AdaptivePath path = AdaptivePath::detach;
  AdaptiveSwitch switched = AdaptiveSwitch::none;
};

class AdaptivePolicy {
 public:
  static constexpr unsigned kTables = 128;       // tables remembered per domain (a power of two)
  static constexpr unsigned kFewEntries = 2;     // a period changing at most this many did not pay
  static constexpr unsigned kSparsePeriods = 2;  // such periods in a row before emulating
  static constexpr unsigned kRunLength = 2;      // quiet writes in a row that make a run

  // A write fault on L1 `table_mfn`; `activity` is a count that moves whenever the guest does
  // anything but write page tables (hypercalls, bounced exceptions and system calls). Inline:
  // every write fault of an adaptive domain asks.
  AdaptiveDecision on_write_fault(uint64_t table_mfn, uint64_t activity) {
    Table& t = table(table_mfn);
    if (!t.emulate) return {AdaptivePath::detach, AdaptiveSwitch::none};
    // Only the low bits are kept: equal means nothing happened between (a wrap of exactly 2^32
    // events between two writes would look like a run once, which costs one detach).
    const uint32_t now = uint32_t(activity);
    t.run = (t.run && now == t.last_activity) ? uint8_t(t.run + 1) : uint8_t(1);
    t.last_activity = now;
    if (t.run < kRunLength) return {AdaptivePath::emulate, AdaptiveSwitch::none};
    t.emulate = false;
    t.run = 0;
    t.sparse_periods = 0;
    return {AdaptivePath::detach, AdaptiveSwitch::to_detach};
  }
  // The table was reattached after a detach period in which `changed` entries changed.
  AdaptiveSwitch on_reattached(uint64_t table_mfn, unsigned changed);
  // Every table starts over (the domain enters the mode).
  void reset();

  // For tests and the log: whether writes to the table are emulated now.
  bool emulating(uint64_t table_mfn) const;

 private:
  struct Table {
    uint32_t tag = 0;            // frame number + 1 (0: free)
    uint32_t last_activity = 0;  // the activity count at the last emulated write
    bool emulate = false;
    uint8_t sparse_periods = 0;  // detach periods in a row that changed few entries
    uint8_t run = 0;             // emulated writes in a row with no activity between them
  };
  static constexpr uint32_t tag_of(uint64_t mfn) { return uint32_t(mfn) + 1; }
  static constexpr unsigned index_of(uint64_t mfn) { return unsigned(mfn) & (kTables - 1); }
  // The table's slot, started over if another table had it.
  Table& table(uint64_t mfn) {
    Table& t = tables_[index_of(mfn)];
    if (t.tag != tag_of(mfn)) {
      t = Table{};
      t.tag = tag_of(mfn);
    }
    return t;
  }

  Table tables_[kTables];
};

}  // namespace ptwr
