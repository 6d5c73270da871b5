#include "mm/table_validation.h"

#include "mm/entry_refs.h"
#include "mm/entry_rules.h"
#include "mm/table_access.h"

namespace mm {

bool is_guest_slot(PagingLevel level, unsigned index) {
    return level != PagingLevel::L4 || is_guest_l4_slot(index);
}

namespace {

uint64_t slot_address(uint64_t table_mfn, unsigned index) {
    return (table_mfn << kPageShift) + index * sizeof(uint64_t);
}

// The loops below skip empty entries before any call: most entries of a table are empty,
// and these loops are the bulk of what a fork and an exit cost.
void release_first_entries(FrameTable& frames, uint64_t mfn, PagingLevel level,
                           unsigned count) {
    for (unsigned index = 0; index < count; ++index) {
        const PageTableEntry entry = load_entry(frames, mfn, index);
        if (entry.present() && is_guest_slot(level, index))
            release_entry_references(frames, level, entry, slot_address(mfn, index));
    }
}

void install_adjusted_entries(MmuContext& context, uint64_t mfn, PagingLevel level) {
    for (unsigned index = 0; index < kEntriesPerTable; ++index) {
        if (!is_guest_slot(level, index)) {
            store_entry(context.frames, mfn, index, context.hypervisor_slots.slot(index));
            continue;
        }
        PageTableEntry entry = load_entry(context.frames, mfn, index);
        if (!entry.present()) continue;
        PageTableEntry adjusted = adjust_guest_entry(level, entry);
        if (adjusted != entry) store_entry(context.frames, mfn, index, adjusted);
    }
}

}  // namespace

int validate_table(MmuContext& context, uint64_t mfn, PagingLevel level) {
    const domid_t owner = context.frames.info(mfn).owner;
    // Entries take_entry_references narrowed (read-only I/O memory): stored only on success,
    // so a table that fails validation is left as the guest wrote it.
    uint64_t narrowed[kEntriesPerTable / 64] = {};
    bool any_narrowed = false;
    for (unsigned index = 0; index < kEntriesPerTable; ++index) {
        const PageTableEntry loaded = load_entry(context.frames, mfn, index);
        if (!loaded.present() || !is_guest_slot(level, index)) continue;
        PageTableEntry entry = loaded;
        int rc = take_entry_references(context, level, entry, owner, slot_address(mfn, index));
        if (rc != 0) {
            release_first_entries(context.frames, mfn, level, index);
            return rc;
        }
        if (entry != loaded) {
            narrowed[index / 64] |= uint64_t{1} << (index % 64);
            any_narrowed = true;
        }
    }
    for (unsigned index = 0; any_narrowed && index < kEntriesPerTable; ++index) {
        if ((narrowed[index / 64] >> (index % 64)) & 1)  // narrowing only ever drops RW
            store_entry(context.frames, mfn, index,
                        load_entry(context.frames, mfn, index).without_flags(PageTableEntry::kWritable));
    }
    install_adjusted_entries(context, mfn, level);
    return 0;
}

void release_table_references(FrameTable& frames, uint64_t mfn, PagingLevel level) {
    release_first_entries(frames, mfn, level, kEntriesPerTable);
}

}  // namespace mm
