#include "mm/va_mapping.h"

#include "mm/entry_update.h"
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
    return page != nullptr && page->owner == context.domain.id && page->has_type(type) &&
           page->validated;
}

}  // namespace

int find_l1_slot(const MmuContext& context, uint64_t l4_mfn, uint64_t va, L1Slot* slot) {
    if (!is_canonical(va) || is_hypervisor_l4_slot(table_index(va, PagingLevel::L4)))
        return error(XEN_EINVAL);
    uint64_t table = l4_mfn;
    for (PagingLevel level = PagingLevel::L4; level != PagingLevel::L1;
         level = next_lower(level)) {
        if (!is_domain_table(context, table, table_type(level))) return error(XEN_EINVAL);
        PageTableEntry entry = load_entry(context.frames, table, table_index(va, level));
        if (!entry.present() || entry.pse()) return error(XEN_EINVAL);
        table = entry.mfn();
    }
    if (!is_domain_table(context, table, PageType::L1)) return error(XEN_EINVAL);
    *slot = L1Slot{table, table_index(va, PagingLevel::L1)};
    return 0;
}

int update_va_mapping(MmuContext& context, uint64_t l4_mfn, uint64_t va, uint64_t value) {
    L1Slot slot;
    int rc = find_l1_slot(context, l4_mfn, va, &slot);
    if (rc != 0) return rc;
    return update_table_entry(context, slot.table_mfn, slot.index, PageTableEntry(value), false);
}

}  // namespace mm
