#include "ptwr/writable_pagetables.h"
#include "mm/entry_update_inline.h"
#include "mm/page_refs.h"
#include "mm/table_access.h"
#include "mm/table_links.h"
#include "ptwr/table_reachability.h"

namespace ptwr {
namespace {
using mm::PageTableEntry;

constexpr uint64_t table_of(uint64_t entry_maddr) { return entry_maddr >> mm::kPageShift; }

uint64_t* entry_at(const mm::FrameTable& frames, uint64_t maddr) {
  return reinterpret_cast<uint64_t*>(frames.memory().frame(maddr >> mm::kPageShift) + (maddr & (mm::kPageBytes - 1)));
}

// The frame's PageInfo when it is a validated L1 of `owner`, else nullptr. Inline: detach asks
// twice (the table and its mapping's table) and then reads the table's links from the answer.
[[gnu::always_inline]] inline const mm::PageInfo* validated_l1_of(const mm::FrameTable& frames, uint64_t mfn,
                                                                  domid_t owner) {
  const mm::PageInfo* page = frames.find(mfn);
  if (page && page->owner() == owner && page->has_type(mm::PageType::L1) && page->validated()) return page;
  return nullptr;
}

// Every store of this path into a table (the unhooked L2 entry, the mapping entry, the
// detached table's entries at reattach) is made under that table's frame lock, one lock at a
// time, as every other store into a validated table is. False, nothing run, if the frame is no
// validated table of `type` any more.
template <typename Store>
bool under_table_lock(mm::MmuContext& context, uint64_t table_mfn, mm::PageType type, Store store) {
  mm::PageInfo* page = context.frames.find(table_mfn);
  if (page == nullptr || !mm::lock_table(*page, type, context.domain.id)) return false;
  store(*page);
  mm::unlock_table(context.frames, table_mfn);
  return true;
}

constexpr unsigned index_of(SlotKind kind) { return unsigned(kind); }
}  // namespace

void ReattachStats::add(const ReattachStats& other) {
  reattached += other.reattached;
  rehooked += other.rehooked;
  changed += other.changed;
  revalidated += other.revalidated;
  refused += other.refused;
}

void WritablePagetables::set_snapshot_storage(uint64_t* active, uint64_t* inactive) {
  snapshots_[index_of(SlotKind::active)] = active;
  snapshots_[index_of(SlotKind::inactive)] = inactive;
}

// The table must be a validated L1 of the domain that at most one known entry links, not
// already detached, and the guest's mapping of it must be in another validated L1 of the domain.
bool WritablePagetables::eligible(const mm::MmuContext& context, const WriteFault& fault) const {
  const mm::FrameTable& frames = context.frames;
  if (!ready()) return false;
  const mm::PageInfo* table = validated_l1_of(frames, fault.table_mfn, context.domain.id);
  if (table == nullptr) return false;
  for (const Slot& s : slots_)
    if (s.in_use && s.table_mfn == fault.table_mfn) return false;
  const mm::TableLinks links = mm::read_links(*table);
  if (links.count > 1 || !links.known()) return false;  // an L1 must hang from one L2 slot
  uint64_t mapping_table = table_of(fault.mapping_entry_maddr);
  return mapping_table != fault.table_mfn && validated_l1_of(frames, mapping_table, context.domain.id) != nullptr;
}

// The mapping entry must map the table read-only. Looked at once no slot's table holds it (a
// detached table's entries are what the guest wrote, not what was validated).
bool WritablePagetables::mapping_eligible(const mm::MmuContext& context, const WriteFault& fault) const {
  PageTableEntry mapping(__atomic_load_n(entry_at(context.frames, fault.mapping_entry_maddr), __ATOMIC_ACQUIRE));
  return mapping.present() && !mapping.writable() && mapping.mfn() == fault.table_mfn;
}

// The detached slot `kind` and the new table would overlap: the new table holds the entry the
// hypervisor made writable for the slot's table (its snapshot would keep the forged entry),
// or the new table's mapping entry lies in the slot's table (guest-written, not validated).
bool WritablePagetables::overlaps(SlotKind kind, const WriteFault& fault) const {
  const Slot& slot = slots_[index_of(kind)];
  return table_of(slot.mapping_entry_maddr) == fault.table_mfn || slot.table_mfn == table_of(fault.mapping_entry_maddr);
}

// Reattaches the slot the new table needs and any slot that overlaps it.
void WritablePagetables::evict(mm::MmuContext& context, SlotKind new_kind, const WriteFault& fault,
                               DetachResult& result) {
  for (SlotKind kind : kSlotKinds) {
    if (!in_use(kind) || (kind != new_kind && !overlaps(kind, fault))) continue;
    result.evicted_table_mfn[index_of(kind)] = slots_[index_of(kind)].table_mfn;
    result.evicted[index_of(kind)] = reattach(context, kind);
  }
}

// Unhooking clears only the present bit, as Xen 3.0 did: the guest still reads which table
// the slot holds (it tests for an empty entry, not a present one, like Linux's pmd_none).
bool WritablePagetables::unhook(mm::MmuContext& context, Slot& slot, uint64_t link) {
  uint64_t* entry = entry_at(context.frames, link);
  if (!under_table_lock(context, table_of(link), mm::PageType::L2, [&](mm::PageInfo&) {
        slot.unhooked_entry = __atomic_fetch_and(entry, ~PageTableEntry::kPresent, __ATOMIC_ACQ_REL);
      }))
    return false;
  slot.unhooked_slot_maddr = link;
  context.effects.flush_local_tlb = true;  // drop cached translations through the table
  return true;
}

// Puts the unhooked L2 entry back, if it is still as the unhook left it.
void WritablePagetables::rehook(mm::MmuContext& context, const Slot& slot) {
  under_table_lock(context, table_of(slot.unhooked_slot_maddr), mm::PageType::L2, [&](mm::PageInfo&) {
    uint64_t unhooked = slot.unhooked_entry & ~PageTableEntry::kPresent;
    __atomic_compare_exchange_n(entry_at(context.frames, slot.unhooked_slot_maddr), &unhooked, slot.unhooked_entry,
                                false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
  });
}

void WritablePagetables::note_tables_unlinked_at(uint64_t stamp) {
  uint64_t seen = __atomic_load_n(&unlinked_stamp_, __ATOMIC_ACQUIRE);
  while (seen < stamp &&
         !__atomic_compare_exchange_n(&unlinked_stamp_, &seen, stamp, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
  }
}

// Inline in both detach calls: the one-CPU one is on every writable-path fault.
[[gnu::always_inline]] inline DetachResult WritablePagetables::detach_table(mm::MmuContext& context,
                                                                            const mm::VcpuBasePointers* bases,
                                                                            unsigned count, bool other_cpus,
                                                                            const WriteFault& fault) {
  DetachResult result;
  if (foreign_use()) {
    result.declined = Decline::foreign_use;
    return result;
  }
  result.declined = Decline::ineligible;
  if (!eligible(context, fault)) return result;
  const mm::TableLinks links = mm::read_links(context.frames.info(fault.table_mfn));
  const uint64_t link = links.count == 1 ? links.slot[0] : 0;
  // Reachable from any vCPU's base pointers (one of them without other CPUs: the faulting one).
  bool active = false;
  for (unsigned i = 0; link && i < count && !active; ++i) active = reachable(context.frames, table_of(link), bases[i]);
  // On several CPUs an unhook would need every CPU flushed before the guest runs again, and
  // the unhooked L2 entry could be walked by another vCPU meanwhile: emulate instead.
  if (active && other_cpus) {
    result.declined = Decline::shared_reachable;
    return result;
  }
  const mm::VcpuBasePointers& faulting = bases[0];
  // The guest would read the unhooked L2 entry as not present and may take the frame it names
  // for a pseudo-physical one (see the header): emulate unless it said it can read it.
  if (active && !guest_reads_unhooked_entries_) {
    result.declined = Decline::would_unhook;
    return result;
  }
  // The retried store could never run if the unhook took its own code or stack away.
  if (active && (may_translate_through(context.frames, fault.table_mfn, faulting, fault.rip) ||
                 may_translate_through(context.frames, fault.table_mfn, faulting, fault.rsp))) {
    result.declined = Decline::cuts_off_guest;
    return result;
  }
  const SlotKind kind = active ? SlotKind::active : SlotKind::inactive;
  evict(context, kind, fault, result);
  if (!mapping_eligible(context, fault)) return result;
  // Xen 3.0's rule: the last batch of this slot changed nothing, so the guest is probably
  // stuck (its write could not run while the table was detached); emulate this one.
  if (last_batch_empty_[index_of(kind)]) {
    last_batch_empty_[index_of(kind)] = false;
    result.declined = Decline::no_progress;
    return result;
  }

  Slot candidate{true,
                 fault.table_mfn,
                 fault.mapping_entry_maddr,
                 fault.mapping_va,
                 0,
                 0,
                 !translated_only_at(context.frames, fault.mapping_entry_maddr, fault.mapping_va),
                 0,
                 other_cpus};
  // No slot's mapping entry lies in this table (evict saw to it): the snapshot holds only
  // entries that were validated, none the hypervisor forged. Taken under the table's lock,
  // which no other CPU then holds to update it.
  if (!under_table_lock(context, fault.table_mfn, mm::PageType::L1, [&](mm::PageInfo& table) {
        candidate.snapshot_blocks = capture_snapshot(mm::table_entries(context.frames, fault.table_mfn),
                                                     snapshots_[index_of(kind)], table.nonzero_blocks);
      }))
    return result;
  // Linked but unreachable tables stay hooked: nothing can walk through them until an MMU
  // operation (which reattaches first) makes them reachable, unless the paging-structure
  // caches still hold an entry that linked them: then a flush makes that so.
  if (active && !unhook(context, candidate, link)) return result;
  if (!active && unlinked_tables_may_be_cached_) {
    context.effects.flush_local_tlb = true;
    unlinked_tables_may_be_cached_ = false;
  }
  // On several CPUs, any CPU that applied an unlink may still walk the table from its
  // paging-structure caches: those of the domain not flushed since the last unlink (this one
  // included) are flushed now, before the mapping turns writable. Most often none: every CPU
  // that runs the domain has switched address space since.
  if (other_cpus) {
    const uint64_t unlinked = unlinked_stamp();
    if (unlinked != 0 && other_cpus_.flush) other_cpus_.flush(other_cpus_.cookie, unlinked, true);
  }
  // The mapping made writable under its own table's lock, if it still maps the table read-only.
  bool forged = false;
  under_table_lock(context, table_of(fault.mapping_entry_maddr), mm::PageType::L1, [&](mm::PageInfo&) {
    if (!mapping_eligible(context, fault)) return;
    __atomic_or_fetch(entry_at(context.frames, fault.mapping_entry_maddr), PageTableEntry::kWritable, __ATOMIC_ACQ_REL);
    forged = true;
  });
  if (!forged) {
    if (candidate.unhooked_slot_maddr) rehook(context, candidate);
    return result;
  }
  slots_[index_of(kind)] = candidate;
  result.unhooked = active;
  context.effects.request_invlpg(fault.mapping_va, false);
  result.detached = true;
  result.declined = Decline::none;
  return result;
}

DetachResult WritablePagetables::detach(mm::MmuContext& context, const mm::VcpuBasePointers& bases,
                                        const WriteFault& fault) {
  return detach_table(context, &bases, 1, false, fault);
}

DetachResult WritablePagetables::detach(mm::MmuContext& context, const SharedView& view, const WriteFault& fault) {
  return detach_table(context, view.bases, view.count, true, fault);
}

// Each changed entry is put back to its snapshot value and then updated to what the guest
// wrote through the ordinary entry update, which checks it and moves the references. The
// unchanged entries are only compared, a block of eight at a time (table_snapshot).
//
// The table is looked up once: it was a validated L1 at detach, every MMU operation reattaches
// before it runs, and updating an L1's own entries never changes the L1's type (they hold
// general and Writable references, no type reference on a table). Should it be no validated
// table any more, every change is refused, as the entry update would refuse it.
void WritablePagetables::revalidate_changed_entries(mm::MmuContext& context, SlotKind kind, ReattachStats& stats) {
  const Slot& slot = slots_[index_of(kind)];
  uint64_t* const entries = mm::table_entries(context.frames, slot.table_mfn);
  const uint64_t table = slot.table_mfn;
  mm::PageInfo& page = context.frames.info(table);
  const bool validated = mm::lock_table(page, mm::PageType::L1, context.domain.id);
  const mm::LockedTable locked{table, page, mm::PagingLevel::L1};
  unsigned refused = 0;
  unsigned revalidated = 0;
  // Captured by value where it can be: the callback runs between calls that clobber registers.
  for_each_changed_entry(
      entries, snapshots_[index_of(kind)], slot.snapshot_blocks,
      [entries, validated, &locked, &context, &refused, &revalidated](unsigned i, uint64_t written, uint64_t old) {
        __atomic_store_n(&entries[i], old, __ATOMIC_RELEASE);
        if (validated && mm::update_locked_table_entry_inline(context, locked, i, PageTableEntry(written), false) == 0)
          ++revalidated;
        else
          ++refused;
      });
  if (validated) mm::unlock_table(context.frames, table);
  stats.changed += revalidated + refused;
  stats.revalidated += revalidated;
  stats.refused += refused;
}

ReattachStats WritablePagetables::reattach(mm::MmuContext& context, SlotKind kind) {
  ReattachStats stats;
  Slot& slot = slots_[index_of(kind)];
  if (!slot.in_use) return stats;
  // The mapping goes back to read-only first, and no CPU can store through a writable
  // translation of it any more before the table is compared with its snapshot: where the glue
  // set OtherCpus (guests on every CPU), the other CPUs of the domain that have not flushed
  // since the store are flushed here, waited for: its other vCPUs' CPUs, or the domain's own CPU
  // when another domain's operation reattaches from elsewhere (ForeignUse). This CPU's vCPU
  // does not run until the effects below are applied, nor does the hypervisor store through
  // the guest's mappings meanwhile.
  under_table_lock(context, table_of(slot.mapping_entry_maddr), mm::PageType::L1, [&](mm::PageInfo&) {
    uint64_t* mapping = entry_at(context.frames, slot.mapping_entry_maddr);
    PageTableEntry current(__atomic_load_n(mapping, __ATOMIC_ACQUIRE));
    if (current.present() && current.mfn() == slot.table_mfn)
      __atomic_and_fetch(mapping, ~PageTableEntry::kWritable, __ATOMIC_ACQ_REL);
  });
  if (other_cpus_.flush) other_cpus_.flush(other_cpus_.cookie, context.frames.flush_clock().now(), false);
  revalidate_changed_entries(context, kind, stats);
  // The writable translation may be cached wherever the mapping entry is translated.
  if (slot.flush_at_reattach)
    context.effects.flush_local_tlb = true;
  else
    context.effects.request_invlpg(slot.mapping_va, false);
  if (slot.unhooked_slot_maddr) {
    rehook(context, slot);
    ++stats.rehooked;
  }
  ++stats.reattached;
  last_batch_empty_[index_of(kind)] = stats.changed == 0;
  slot = Slot{};
  return stats;
}

ReattachStats WritablePagetables::reattach_all(mm::MmuContext& context) {
  ReattachStats stats = reattach(context, SlotKind::active);
  stats.add(reattach(context, SlotKind::inactive));
  return stats;
}
}  // namespace ptwr
