#include "mm/entry_update.h"

#include "mm/entry_refs.h"
#include "mm/entry_rules.h"
#include "mm/table_access.h"
#include "mm/table_validation.h"

namespace mm {

namespace {

constexpr uint64_t kHardwareSetBits = PageTableEntry::kAccessed | PageTableEntry::kDirty;

// Writes `replacement` over `old`, tolerating A/D bits the hardware sets meanwhile. Fails
// only if something else changed the entry, which the caller's lock should make impossible.
bool commit_entry(MmuContext& context, uint64_t table_mfn, unsigned index, PageTableEntry& old,
                  PageTableEntry replacement, bool preserve_accessed_dirty) {
    for (;;) {
        PageTableEntry seen = old;
        PageTableEntry value = preserve_accessed_dirty
                                   ? replacement.with_flags(seen.raw() & kHardwareSetBits)
                                   : replacement;
        if (exchange_entry(context.frames, table_mfn, index, seen, value)) return true;
        if (((seen.raw() ^ old.raw()) & ~kHardwareSetBits) != 0) return false;
        old = seen;
    }
}

}  // namespace

int update_table_entry(MmuContext& context, uint64_t table_mfn, unsigned index,
                       PageTableEntry requested, bool preserve_accessed_dirty) {
    const PageInfo* table = context.frames.find(table_mfn);
    if (table == nullptr || !table->is_validated_table() || index >= kEntriesPerTable)
        return error(XEN_EINVAL);
    const PagingLevel level = table_level(table->type);
    if (!is_guest_slot(level, index)) return error(XEN_EINVAL);

    const uint64_t slot_maddr = (table_mfn << kPageShift) + index * sizeof(uint64_t);
    PageTableEntry old = load_entry(context.frames, table_mfn, index);
    PageTableEntry replacement = requested;
    bool takes_references = false;
    if (replacement.present()) {
        int rc = check_new_entry_bits(context, level, replacement);
        if (rc != 0) return rc;
        replacement = adjust_guest_entry(level, replacement);
        takes_references = !is_harmless_change(level, old, replacement);
        if (takes_references) {
            rc = take_checked_entry_references(context, level, replacement, table->owner, slot_maddr);
            if (rc != 0) return rc;
        }
    }
    const bool releases_old = takes_references || !replacement.present();
    if (!commit_entry(context, table_mfn, index, old, replacement, preserve_accessed_dirty)) {
        if (takes_references) release_entry_references(context.frames, level, replacement, slot_maddr);
        return error(XEN_EBUSY);
    }
    if (releases_old) release_entry_references(context.frames, level, old, slot_maddr);
    if (level != PagingLevel::L1) context.frames.walks_changed();
    if (level != PagingLevel::L1 && releases_old && old.present()) context.effects.table_unlinked = true;
    if (level == PagingLevel::L4) context.effects.l4_entry_changed = true;
    return 0;
}

}  // namespace mm
