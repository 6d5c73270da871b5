#include "mm/va_mapping.h"

#include "mm/entry_update.h"
#include "mm/error.h"
#include "mm/hypervisor_slots.h"
#include "mm/table_access.h"

namespace mm {

namespace {

constexpr bool is_canonical(uint64_t va) {
  const uint64_t upper = va >> 47;
  return upper == 0 || upper == (uint64_t{1} << 17) - 1;
}

bool is_domain_table(const MmuContext& context, uint64_t mfn, PageType type) {
  const PageInfo* page = context.frames.find(mfn);
  return page != nullptr && page->owner == context.domain.id && page->has_type(type) && page->validated;
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
    const PageInfo& page = context.frames.info(table);
    if (context.frames.flush_clock().may_hold(page.flush_stamp)) return false;
    if (level != PagingLevel::L4) {
      if (page.links.count != 1) return false;
      continue;
    }
    if (!page.links.known()) return false;
    for (unsigned link = 0; link < page.links.count; ++link) {
      if ((page.links.slot[link] & (kPageBytes - 1)) / sizeof(uint64_t) != l4_index) return false;
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

int update_va_mapping(MmuContext& context, uint64_t l4_mfn, uint64_t va, uint64_t value, bool va_invalidated) {
  L1Slot slot;
  int rc = find_l1_slot(context, l4_mfn, va, &slot);
  if (rc != 0) return rc;
  const PageTableEntry old = load_entry(context.frames, slot.table_mfn, slot.index);
  PageInfo* old_target = old.present() && old.writable() ? context.frames.find(old.mfn()) : nullptr;
  const uint64_t old_stamp = old_target != nullptr ? old_target->flush_stamp : 0;
  rc = update_table_entry(context, slot.table_mfn, slot.index, PageTableEntry(value), false);
  if (rc != 0) return rc;
  // The writable translation this update removed is invalidated before anything can use it:
  // its removal leaves nothing stale, so the frame keeps the stamp of its previous drop (a
  // guest making a fresh page table read-only with UVMF_INVLPG needs no full flush to link it).
  if (va_invalidated && old_target != nullptr && !old_target->is_free() && translated_only_at(context, l4_mfn, va))
    old_target->flush_stamp = old_stamp;
  return 0;
}

}  // namespace mm
