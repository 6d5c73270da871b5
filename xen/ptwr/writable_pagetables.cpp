#include "ptwr/writable_pagetables.h"
#include "mm/entry_update.h"
#include "mm/table_access.h"
#include "ptwr/table_reachability.h"

namespace ptwr {
namespace {
using mm::PageTableEntry;

uint64_t* entry_at(const mm::FrameTable& frames, uint64_t maddr) {
  return reinterpret_cast<uint64_t*>(frames.memory().frame(maddr >> mm::kPageShift) + (maddr & (mm::kPageBytes - 1)));
}

bool is_validated_l1_of(const mm::FrameTable& frames, uint64_t mfn, domid_t owner) {
  const mm::PageInfo* page = frames.find(mfn);
  return page && page->owner == owner && page->is_validated_table() && page->type == mm::PageType::L1;
}
}  // namespace

void ReattachStats::add(const ReattachStats& other) {
  reattached += other.reattached;
  rehooked += other.rehooked;
  changed += other.changed;
  revalidated += other.revalidated;
  refused += other.refused;
}

void WritablePagetables::set_snapshot_storage(uint64_t* active, uint64_t* inactive) {
  snapshots_[unsigned(SlotKind::active)] = active;
  snapshots_[unsigned(SlotKind::inactive)] = inactive;
}

// The table must be a validated L1 of the domain that at most one known entry links, not
// already detached, and the guest's mapping of it must be a read-only entry of another
// validated L1 of the domain.
bool WritablePagetables::eligible(const mm::MmuContext& context, uint64_t table_mfn,
                                  uint64_t mapping_entry_maddr) const {
  const mm::FrameTable& frames = context.frames;
  if (!ready() || !is_validated_l1_of(frames, table_mfn, context.domain.id)) return false;
  for (const Slot& s : slots_)
    if (s.in_use && s.table_mfn == table_mfn) return false;
  const mm::TableLinks& links = frames.info(table_mfn).links;
  if (links.count > 1 || !links.known()) return false;  // an L1 must hang from one L2 slot
  uint64_t mapping_table = mapping_entry_maddr >> mm::kPageShift;
  if (mapping_table == table_mfn || !is_validated_l1_of(frames, mapping_table, context.domain.id)) return false;
  PageTableEntry mapping(*entry_at(frames, mapping_entry_maddr));
  return mapping.present() && !mapping.writable() && mapping.mfn() == table_mfn;
}

DetachResult WritablePagetables::detach(mm::MmuContext& context, const mm::VcpuBasePointers& bases,
                                        uint64_t table_mfn, uint64_t mapping_entry_maddr, uint64_t mapping_va) {
  DetachResult result;
  if (!eligible(context, table_mfn, mapping_entry_maddr)) return result;
  const mm::TableLinks& links = context.frames.info(table_mfn).links;
  const uint64_t link = links.count == 1 ? links.slot[0] : 0;
  bool active = link && reachable(context.frames, link >> mm::kPageShift, bases);
  SlotKind kind = active ? SlotKind::active : SlotKind::inactive;
  if (in_use(kind)) {
    result.evicted_table_mfn = slots_[unsigned(kind)].table_mfn;
    result.evicted = reattach(context, kind);
  }

  Slot& slot = slots_[unsigned(kind)];
  slot = Slot{true, table_mfn, mapping_entry_maddr, mapping_va, 0, 0};
  // Linked but unreachable tables stay hooked: nothing can walk through them until an MMU
  // operation (which reattaches first) makes them reachable.
  // Unhooking clears only the present bit, as Xen 3.0 did: the guest still reads which table
  // the slot holds (it tests for an empty entry, not a present one, like Linux's pmd_none).
  if (active) {
    slot.unhooked_slot_maddr = link;
    slot.unhooked_entry =
        __atomic_fetch_and(entry_at(context.frames, link), ~PageTableEntry::kPresent, __ATOMIC_ACQ_REL);
    context.effects.flush_local_tlb = true;  // drop cached translations through the table
    result.unhooked = true;
  }
  __builtin_memcpy(snapshots_[unsigned(kind)], mm::table_entries(context.frames, table_mfn), mm::kPageBytes);
  uint64_t* mapping = entry_at(context.frames, mapping_entry_maddr);
  __atomic_or_fetch(mapping, PageTableEntry::kWritable, __ATOMIC_ACQ_REL);
  context.effects.request_invlpg(mapping_va, false);
  result.detached = true;
  return result;
}

// Each changed entry is put back to its snapshot value and then updated to what the guest
// wrote through the ordinary entry update, which checks it and moves the references.
void WritablePagetables::revalidate_changed_entries(mm::MmuContext& context, SlotKind kind, ReattachStats& stats) {
  const Slot& slot = slots_[unsigned(kind)];
  const uint64_t* snapshot = snapshots_[unsigned(kind)];
  uint64_t* entries = mm::table_entries(context.frames, slot.table_mfn);
  for (unsigned i = 0; i < mm::kEntriesPerTable; ++i) {
    uint64_t written = __atomic_load_n(&entries[i], __ATOMIC_ACQUIRE);
    if (written == snapshot[i]) continue;
    ++stats.changed;
    __atomic_store_n(&entries[i], snapshot[i], __ATOMIC_RELEASE);
    if (mm::update_table_entry(context, slot.table_mfn, i, PageTableEntry(written), false) == 0)
      ++stats.revalidated;
    else
      ++stats.refused;
  }
}

ReattachStats WritablePagetables::reattach(mm::MmuContext& context, SlotKind kind) {
  ReattachStats stats;
  Slot& slot = slots_[unsigned(kind)];
  if (!slot.in_use) return stats;
  revalidate_changed_entries(context, kind, stats);
  uint64_t* mapping = entry_at(context.frames, slot.mapping_entry_maddr);
  PageTableEntry current(*mapping);
  if (current.present() && current.mfn() == slot.table_mfn)
    __atomic_and_fetch(mapping, ~PageTableEntry::kWritable, __ATOMIC_ACQ_REL);
  context.effects.request_invlpg(slot.mapping_va, false);
  if (slot.unhooked_slot_maddr) {
    uint64_t unhooked = slot.unhooked_entry & ~PageTableEntry::kPresent;
    __atomic_compare_exchange_n(entry_at(context.frames, slot.unhooked_slot_maddr), &unhooked, slot.unhooked_entry,
                                false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    ++stats.rehooked;
  }
  ++stats.reattached;
  slot = Slot{};
  return stats;
}

ReattachStats WritablePagetables::reattach_all(mm::MmuContext& context) {
  ReattachStats stats = reattach(context, SlotKind::active);
  stats.add(reattach(context, SlotKind::inactive));
  return stats;
}
}  // namespace ptwr
