// Xen 3.0-style writable pagetables, as pure logic over the frame table and machine memory.
//
// On a guest write fault to one of its L1 tables the table is *detached*: if the running
// address space can reach it, the L2 entry linking it loses its present bit (unhook; the guest
// can still read which table the slot holds) and the TLB must be
// flushed; its 512 entries are snapshotted (by 64-byte blocks, table_snapshot); the guest's mapping of the table is
// made writable. The guest then writes entries at native speed. At *reattach* the entries that differ from the snapshot
// are re-validated one by one through the normal entry update (so they obey the same rules as mmu_update; a refused
// entry keeps its old value), the mapping becomes read-only again and the L2 entry is restored. While detached the
// table is unreachable (or was never reachable), so nothing the guest writes into it can be used.
//
// Two slots, as Xen had: one for an unhooked (active) table, one for a table the running
// address space cannot reach (a child's table during fork), which needs no unhook and no flush.
// Hardware work (TLB flush, invlpg) is requested through the context's MmuEffects.
//
// What keeps it sound (each rule has a unit test in tests/unit/ptwr_writable_pagetables_test.cpp):
// - The two slots never overlap. The mapping entry of a detached table is one the hypervisor
//   forged (RW on a read-only entry of a validated L1); if that L1 were detached too, its
//   snapshot would hold the forged entry and its reattach would release a Writable reference
//   never taken. So a detach first reattaches the other slot when the table being detached
//   holds the other slot's mapping entry, or when its own mapping entry lies in the other
//   slot's (unvalidated, guest-written) table.
// - No writable translation survives reattach. Reattach invalidates the mapping's one page
//   only when the links say that entry is translated at that linear address and no other
//   (table_reachability: translated_only_at); otherwise it flushes the whole TLB.
// - The guest always makes progress. A table whose unhook would cut off the writing
//   instruction or the guest's stack is not detached (the retried store could never run),
//   and, as Xen 3.0 did, when the last batch of a slot ended with no entry changed the next
//   write for that slot is emulated instead of detached.
// - A guest only ever reads a present L2 entry where it wrote one, unless it said it can take
//   an unhooked one (set_guest_reads_unhooked_entries). Unhooking is Xen 3.0.2's contract,
//   which Xen 3.0.3 withdrew: xenlinux built for Xen <= 3.0.2 turned any nonzero pmd into
//   pseudo-physical form and set its present bit on reading it; modern Linux (6.1's
//   pte_mfn_to_pfn) translates the frame of a *present* entry only, so on reading an unhooked
//   pmd it takes the L1's machine frame for a pseudo-physical one and works on the wrong page
//   (vmalloc's pte_alloc_kernel found the pmd not none and its mmu_updates filled a data page
//   while the real L1 stayed empty: the `cryptomgr_test` oops of issue 11). Without that
//   declaration a write to a table the running address space reaches is emulated; only
//   unreachable (inactive) tables are detached, and those need no unhook.
// - An unreachable table is unreachable in the TLB too: an L2-L4 entry that linked a table
//   and was removed without a flush since may still sit in the paging-structure caches, so
//   an inactive detach flushes first while that may be so (note_tables_unlinked).
// - On several CPUs (docs/architecture.md, "The PV MMU on several CPUs"): the slots are the
//   domain's, changed only under its slots lock (the glue's, kSlotsLockClass); every store into a
//   table here is made under that table's frame lock, one lock at a time; another domain's MMU
//   operation on the domain keeps detaches off while it runs (begin_foreign_use).
// - A domain whose vCPUs may run on several CPUs at once (the SharedView detach) detaches only
//   tables that no vCPU's base pointers reach (never unhooks: Decline::shared_reachable); its
//   own vCPUs' MMU operations keep detaches off while they run, as a foreign one does (the
//   glue's MmuOperation), so none links or loads a table detached behind its reattach; after an
//   unflushed unlink (note_tables_unlinked_at) every CPU of the domain not flushed since is
//   flushed before the mapping turns writable (OtherCpus); and reattach turns the mapping
//   read-only and flushes the other CPUs before it compares the table with its snapshot, so no
//   store through a stale writable translation can follow the comparison.
#pragma once
#include "mm/mm_locks.h"
#include "mm/mmu_context.h"
#include "mm/vcpu_base_pointers.h"
#include "ptwr/table_snapshot.h"

namespace ptwr {
// The lock of a domain's slots (WritablePagetables::slots_lock): held by the glue around every
// detach and reattach, whichever CPU runs it (the domain's own vCPU, or the control domain's
// operation on the domain, which reattaches first). Below the frame locks: a detach takes the
// frame locks of the tables it writes, one at a time, under it.
inline constexpr lock_order::LockClass kSlotsLockClass{"writable-pagetable slots", lock_order::Level::ptwr_slots};

enum class SlotKind : unsigned { active = 0, inactive = 1 };
inline constexpr SlotKind kSlotKinds[] = {SlotKind::active, SlotKind::inactive};

struct Slot {
  bool in_use = false;
  uint64_t table_mfn = 0;            // the detached L1
  uint64_t mapping_entry_maddr = 0;  // the L1 entry through which the guest writes the table
  uint64_t mapping_va = 0;           // the guest address of that mapping
  uint64_t unhooked_slot_maddr = 0;  // the L2 entry made not-present to unhook it (0: not unhooked)
  uint64_t unhooked_entry = 0;       // that entry's value, restored at reattach
  bool flush_at_reattach = false;    // the mapping may be in the TLB at more than mapping_va
  BlockMask snapshot_blocks = 0;     // the blocks of the snapshot that hold a copy (table_snapshot)
  bool other_cpus = false;           // detached while vCPUs of the domain may run on other CPUs
};

// The domain's other CPUs, where guests run on every CPU (the glue sets it at enable, with
// sched_smp=1): every reattach asks it (its vCPUs on other CPUs, or the domain's own CPU when
// another domain's operation reattaches from elsewhere), a SharedView detach after an unlink.
struct OtherCpus {
  // Flushes the whole TLB of every CPU (this one too when `this_cpu_too`) that may hold a
  // translation of the domain's made before the flush clock (context.frames.flush_clock())
  // read `stamp`: the domain's dirty CPUs that have not flushed since. Returns once they have.
  void (*flush)(void* cookie, uint64_t stamp, bool this_cpu_too) = nullptr;
  void* cookie = nullptr;
};

// Who may reach the domain's tables while a table is detached, for a domain whose vCPUs may
// run on several CPUs at once: the base pointers of every vCPU of it that has any (not only
// the faulting one), read while no MMU operation of the domain is under way (foreign_use).
struct SharedView {
  const mm::VcpuBasePointers* bases = nullptr;
  unsigned count = 0;
};

struct ReattachStats {
  unsigned reattached = 0;   // tables reattached
  unsigned rehooked = 0;     // of which were unhooked
  unsigned changed = 0;      // entries that differed from the snapshot
  unsigned revalidated = 0;  // entries re-validated and kept
  unsigned refused = 0;      // entries refused by the page-type rules (old value restored)
  void add(const ReattachStats& other);
};

// A guest kernel's write fault on one of its L1 tables, as the fault handler found it.
struct WriteFault {
  uint64_t table_mfn = 0;            // the L1 written
  uint64_t mapping_entry_maddr = 0;  // the read-only L1 entry that maps it at mapping_va
  uint64_t mapping_va = 0;           // the page written (the fault address, page aligned)
  uint64_t rip = 0;                  // the writing instruction
  uint64_t rsp = 0;                  // the guest's stack
};

// Why a write is emulated rather than detached.
enum class Decline : unsigned {
  none = 0,
  ineligible,        // not a singly linked validated L1 with a read-only mapping in another L1
  cuts_off_guest,    // the unhook would cut off the writing instruction or the stack
  would_unhook,      // reachable, and the guest has not said it can read an unhooked L2 entry
  no_progress,       // the slot's last batch changed nothing (Xen 3.0's rule)
  foreign_use,       // an MMU operation on the domain's tables (another vCPU's, another domain's) is under way
  shared_reachable,  // reachable from some vCPU's base pointers, and vCPUs may run on other CPUs
};

struct DetachResult {
  bool detached = false;  // false: use emulation instead
  bool unhooked = false;
  Decline declined = Decline::none;
  // Slots reattached first (indexed by SlotKind): the one of the same kind, and the other one
  // when it overlapped the new table. Their effects are in the context, even when not detached.
  ReattachStats evicted[2];
  uint64_t evicted_table_mfn[2] = {0, 0};
};

class WritablePagetables {
 public:
  // Snapshot storage: 512 entries per slot, provided by the caller (hypervisor frames).
  void set_snapshot_storage(uint64_t* active, uint64_t* inactive);
  bool ready() const { return snapshots_[0] && snapshots_[1]; }

  // Whether the guest reads an unhooked L2 entry (present bit clear, frame kept) as the table it
  // names: tests upper-level entries for none, not present. Off until the guest declares it
  // (the kernel's PVHV_ELFNOTE_UNHOOK_TOLERANT note); off, reachable tables are never unhooked.
  void set_guest_reads_unhooked_entries(bool tolerant) { guest_reads_unhooked_entries_ = tolerant; }
  bool guest_reads_unhooked_entries() const { return guest_reads_unhooked_entries_; }

  // Detaches the L1 the fault wrote, or says why the write should be emulated instead.
  DetachResult detach(mm::MmuContext& context, const mm::VcpuBasePointers& bases, const WriteFault& fault);
  // The same in a domain whose vCPUs may run on several CPUs at once: only a table that no base
  // pointer of `view` reaches is detached (the inactive slot; an unhook would have to flush every
  // CPU at once and is left to emulation), after the paging-structure caches of every CPU that
  // may still walk it through an unlinked entry were flushed (OtherCpus), and its reattach
  // flushes the other CPUs before comparing (reattach).
  DetachResult detach(mm::MmuContext& context, const SharedView& view, const WriteFault& fault);
  void set_other_cpus(const OtherCpus& other_cpus) { other_cpus_ = other_cpus; }
  ReattachStats reattach(mm::MmuContext& context, SlotKind kind);
  ReattachStats reattach_all(mm::MmuContext& context);

  // The TLB of the CPU the domain runs on may hold paging-structure entries of a table an
  // L2-L4 entry no longer links (MmuEffects::table_unlinked, applied without a full flush),
  // until the next full flush. Kept by the glue that applies effects.
  void note_tables_unlinked() { unlinked_tables_may_be_cached_ = true; }
  void note_full_tlb_flush() { unlinked_tables_may_be_cached_ = false; }
  bool unlinked_tables_may_be_cached() const { return unlinked_tables_may_be_cached_; }
  // The same for every CPU: the flush clock (context.frames.flush_clock()) read after the last
  // unlink any CPU applied without a full flush (atomic, the latest kept; 0: none). A SharedView
  // detach has OtherCpus flush the CPUs that have not flushed since.
  void note_tables_unlinked_at(uint64_t stamp);
  uint64_t unlinked_stamp() const { return __atomic_load_n(&unlinked_stamp_, __ATOMIC_ACQUIRE); }

  // Another domain's MMU operations on this domain's tables or frames (the control domain's
  // pt_dom updates, pins, mappings of its frames) run between begin and end, from another CPU:
  // the glue reattaches every slot after begin, and no table is detached until the last end
  // (Decline::foreign_use), so those operations only ever see validated tables. In a domain
  // whose vCPUs run on several CPUs its own vCPUs' MMU operations (hypercalls, emulated writes,
  // a vCPU's context) count too (the glue's MmuOperation): one of them may link a table, or load
  // a base pointer, that makes a table another vCPU detached reachable.
  void begin_foreign_use() { __atomic_fetch_add(&foreign_users_, 1, __ATOMIC_ACQ_REL); }
  void end_foreign_use() { __atomic_fetch_sub(&foreign_users_, 1, __ATOMIC_ACQ_REL); }
  bool foreign_use() const { return __atomic_load_n(&foreign_users_, __ATOMIC_ACQUIRE) != 0; }

  // Read without the slots lock to skip the lock when nothing is detached: exact for a domain
  // that runs on one CPU at a time, a hint for anyone else (who must take the lock: the glue's
  // MmuOperation in a domain on several CPUs).
  bool in_use(SlotKind kind) const { return __atomic_load_n(&slots_[unsigned(kind)].in_use, __ATOMIC_ACQUIRE); }
  bool any_in_use() const { return in_use(SlotKind::active) || in_use(SlotKind::inactive); }
  uint32_t slots_lock = 0;  // kSlotsLockClass: the glue's
  const Slot& slot(SlotKind kind) const { return slots_[unsigned(kind)]; }

 private:
  bool eligible(const mm::MmuContext& context, const WriteFault& fault) const;
  bool mapping_eligible(const mm::MmuContext& context, const WriteFault& fault) const;
  bool overlaps(SlotKind kind, const WriteFault& fault) const;
  void evict(mm::MmuContext& context, SlotKind new_kind, const WriteFault& fault, DetachResult& result);
  bool unhook(mm::MmuContext& context, Slot& slot, uint64_t link);
  void rehook(mm::MmuContext& context, const Slot& slot);
  DetachResult detach_table(mm::MmuContext& context, const mm::VcpuBasePointers* bases, unsigned count, bool other_cpus,
                            const WriteFault& fault);
  void revalidate_changed_entries(mm::MmuContext& context, SlotKind kind, ReattachStats& stats);

  Slot slots_[2];
  uint64_t* snapshots_[2] = {nullptr, nullptr};
  // Xen 3.0's prev_nr_updates == 0, per slot: its last reattach found no entry changed.
  bool last_batch_empty_[2] = {false, false};
  bool unlinked_tables_may_be_cached_ = false;
  bool guest_reads_unhooked_entries_ = false;
  uint32_t foreign_users_ = 0;
  uint64_t unlinked_stamp_ = 0;
  OtherCpus other_cpus_{};
};
}  // namespace ptwr
