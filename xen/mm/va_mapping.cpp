#include "mm/va_mapping.h"

#include "mm/entry_update.h"
#include "mm/error.h"
#include "mm/hypervisor_slots.h"
#include "mm/page_refs.h"
#include "mm/table_access.h"
#include "mm/table_links.h"

namespace mm {

namespace {

constexpr bool is_canonical(uint64_t va) {
  const uint64_t upper = va >> 47;
  return upper == 0 || upper == (uint64_t{1} << 17) - 1;
}

bool is_domain_table(const MmuContext& context, uint64_t mfn, PageType type) {
  const PageInfo* page = context.frames.find(mfn);
  return page != nullptr && page->owner() == context.domain.id && page->has_type(type) && page->validated();
}

// Whether the L1 entry for `va` can be in the TLB at `va` only, through the address space at
// `l4_mfn` (the one loaded in CR3: nothing from another survived the CR3 load): the L3 is
// linked only at va's L4 slot (in this L4, and at the same slot of another, as the user L4 and
// the kernel L4's mirror of it), the L2 and the L1 are linked once, and none of the three lost
// a link or any other type reference since the last full flush (a walk through an old link
// may still be cached). Precondition: find_l1_slot succeeded.
bool translated_only_at(const MmuContext& context, uint64_t l4_mfn, uint64_t va) {
  const unsigned l4_index = table_index(va, PagingLevel::L4);
  uint64_t table = l4_mfn;
  for (PagingLevel level = PagingLevel::L4; level != PagingLevel::L1; level = next_lower(level)) {
    table = load_entry(context.frames, table, table_index(va, level)).mfn();
    const PageInfo* page = context.frames.find(table);
    if (page == nullptr || context.frames.flush_clock().may_hold(page->stamp())) return false;
    const TableLinks links = read_links(*page);
    if (level != PagingLevel::L4) {
      if (links.count != 1) return false;
      continue;
    }
    if (!links.known()) return false;
    for (unsigned link = 0; link < links.count; ++link) {
      if ((links.slot[link] & (kPageBytes - 1)) / sizeof(uint64_t) != l4_index) return false;
    }
  }
  return true;
}

}  // namespace

int find_l1_slot(const MmuContext& context, uint64_t l4_mfn, uint64_t va, L1Slot* slot) {
  if (!is_canonical(va) || is_hypervisor_l4_slot(table_index(va, PagingLevel::L4))) return error(XEN_EINVAL);
  uint64_t table = l4_mfn;
  for (PagingLevel level = PagingLevel::L4; level != PagingLevel::L1; level = next_lower(level)) {
    if (!is_domain_table(context, table, table_type(level))) return error(XEN_EINVAL);
    PageTableEntry entry = load_entry(context.frames, table, table_index(va, level));
    if (!entry.present() || entry.pse()) return error(XEN_EINVAL);
    table = entry.mfn();
  }
  if (!is_domain_table(context, table, PageType::L1)) return error(XEN_EINVAL);
  *slot = L1Slot{table, table_index(va, PagingLevel::L1)};
  return 0;
}

// The walk finds the L1 without locks (another CPU may change the tables above meanwhile, as
// on Xen, whose guest linear walk is as unlocked): the L1 is then locked and checked again,
// a validated L1 of the domain, and the update is made under its lock.
int update_va_mapping(MmuContext& context, uint64_t l4_mfn, uint64_t va, uint64_t value, bool va_invalidated) {
  L1Slot slot;
  int rc = find_l1_slot(context, l4_mfn, va, &slot);
  if (rc != 0) return rc;
  PageInfo& table = context.frames.info(slot.table_mfn);
  if (!lock_table(table, PageType::L1, context.domain.id)) return error(XEN_EINVAL);
  const PageTableEntry old = load_entry(context.frames, slot.table_mfn, slot.index);
  PageInfo* old_target = old.present() && old.writable() ? context.frames.find(old.mfn()) : nullptr;
  const uint64_t old_stamp = old_target != nullptr ? old_target->stamp() : 0;
  rc = update_locked_table_entry(context, LockedTable{slot.table_mfn, table, PagingLevel::L1}, slot.index,
                                 PageTableEntry(value), false);
  // The writable translation this update removed is invalidated before anything can use it:
  // its removal leaves nothing stale, so the frame keeps the stamp of its previous drop (a
  // guest making a fresh page table read-only with UVMF_INVLPG needs no full flush to link it).
  // Only the stamp this update left is taken back (another CPU's drop since stays), and only if
  // the caller says no other CPU can hold the translation (va_invalidated: the domain runs on
  // this CPU alone). The old entry's frame is one of the domain's: its stamp is looked at
  // while the L1 is still locked, so the entry's removal is this update's.
  if (rc == 0 && va_invalidated && old_target != nullptr && !old_target->is_free() &&
      translated_only_at(context, l4_mfn, va)) {
    uint64_t left = old_target->stamp();
    if (left != old_stamp)
      __atomic_compare_exchange_n(&old_target->flush_stamp, &left, old_stamp, false, __ATOMIC_ACQ_REL,
                                  __ATOMIC_RELAXED);
  }
  unlock_table(context.frames, slot.table_mfn);
  return rc;
}

}  // namespace mm
