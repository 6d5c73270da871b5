// Xen 3.0-style writable pagetables, as pure logic over the frame table and machine memory.
//
// On a guest write fault to one of its L1 tables the table is *detached*: if the running
// address space can reach it, the L2 entry linking it loses its present bit (unhook; the guest
// can still read which table the slot holds) and the TLB must be
// flushed; its 512 entries are snapshotted; the guest's mapping of the table is made writable.
// The guest then writes entries at native speed. At *reattach* the entries that differ from
// the snapshot are re-validated one by one through the normal entry update (so they obey the
// same rules as mmu_update; a refused entry keeps its old value), the mapping becomes
// read-only again and the L2 entry is restored. While detached the table is unreachable (or
// was never reachable), so nothing the guest writes into it can be used.
//
// Two slots, as Xen had: one for an unhooked (active) table, one for a table the running
// address space cannot reach (a child's table during fork), which needs no unhook and no flush.
// Hardware work (TLB flush, invlpg) is requested through the context's MmuEffects.
#pragma once
#include "mm/mmu_context.h"
#include "mm/vcpu_base_pointers.h"

namespace ptwr {
enum class SlotKind : unsigned { active = 0, inactive = 1 };

struct Slot {
  bool in_use = false;
  uint64_t table_mfn = 0;           // the detached L1
  uint64_t mapping_entry_maddr = 0; // the L1 entry through which the guest writes the table
  uint64_t mapping_va = 0;          // the guest address of that mapping
  uint64_t unhooked_slot_maddr = 0; // the L2 entry made not-present to unhook it (0: not unhooked)
  uint64_t unhooked_entry = 0;      // that entry's value, restored at reattach
};

struct ReattachStats {
  unsigned reattached = 0;   // tables reattached
  unsigned rehooked = 0;     // of which were unhooked
  unsigned changed = 0;      // entries that differed from the snapshot
  unsigned revalidated = 0;  // entries re-validated and kept
  unsigned refused = 0;      // entries refused by the page-type rules (old value restored)
  void add(const ReattachStats& other);
};

struct DetachResult {
  bool detached = false;     // false: not eligible, use emulation instead
  bool unhooked = false;
  ReattachStats evicted;     // a slot of the same kind that had to be reattached first
  uint64_t evicted_table_mfn = 0;  // the table it held (when evicted.reattached)
};

class WritablePagetables {
 public:
  // Snapshot storage: 512 entries per slot, provided by the caller (hypervisor frames).
  void set_snapshot_storage(uint64_t* active, uint64_t* inactive);
  bool ready() const { return snapshots_[0] && snapshots_[1]; }

  // Detaches L1 `table_mfn` of context.domain for a write through the mapping entry at
  // `mapping_entry_maddr` (which maps the table read-only at `mapping_va`).
  DetachResult detach(mm::MmuContext& context, const mm::VcpuBasePointers& bases, uint64_t table_mfn,
                      uint64_t mapping_entry_maddr, uint64_t mapping_va);
  ReattachStats reattach(mm::MmuContext& context, SlotKind kind);
  ReattachStats reattach_all(mm::MmuContext& context);

  bool in_use(SlotKind kind) const { return slots_[unsigned(kind)].in_use; }
  bool any_in_use() const { return in_use(SlotKind::active) || in_use(SlotKind::inactive); }
  const Slot& slot(SlotKind kind) const { return slots_[unsigned(kind)]; }

 private:
  bool eligible(const mm::MmuContext& context, uint64_t table_mfn, uint64_t mapping_entry_maddr) const;
  void revalidate_changed_entries(mm::MmuContext& context, SlotKind kind, ReattachStats& stats);

  Slot slots_[2];
  uint64_t* snapshots_[2] = {nullptr, nullptr};
};
}  // namespace ptwr
