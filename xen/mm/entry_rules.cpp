#include "mm/entry_rules.h"

#include "mm/hypervisor_slots.h"

namespace mm {

bool is_guest_l4_slot(unsigned index) {
    return index < kEntriesPerTable && !is_hypervisor_l4_slot(index);
}

int check_entry_bits(PagingLevel level, PageTableEntry entry) {
    if (level != PagingLevel::L1 && entry.reserved_address_bits()) return error(XEN_EINVAL);
    if (entry.has_any(entry.flags() & ~guest_settable_flags(level))) return error(XEN_EINVAL);
    return 0;
}

PageTableEntry adjust_guest_entry(PagingLevel level, PageTableEntry entry) {
    if (!entry.present()) return entry;
    switch (level) {
    case PagingLevel::L1:
        if (!entry.user())
            entry = entry.with_flags(PageTableEntry::kUser | kGuestKernelMarker);
        if (entry.has(kGuestKernelMarker)) entry = entry.without_flags(PageTableEntry::kGlobal);
        return entry;
    case PagingLevel::L4:
        return entry.with_flags(PageTableEntry::kUser | PageTableEntry::kAccessed);
    default:
        return entry.with_flags(PageTableEntry::kUser);
    }
}

bool is_harmless_change(PagingLevel level, PageTableEntry old, PageTableEntry replacement) {
    if (!old.present() || !replacement.present()) return false;
    uint64_t changed = old.raw() ^ replacement.raw();
    return (changed & ~flags_changeable_without_revalidation(level)) == 0;
}

bool is_denied_interrupt_frame(uint64_t mfn, const InterruptHardware& hardware) {
    if (mfn == hardware.local_apic_mfn) return true;
    if (mfn >= kMsiFirstMfn && mfn <= kMsiLastMfn) return true;
    return hardware.hypertransport && mfn >= kHyperTransportFirstMfn && mfn <= kHyperTransportLastMfn;
}

IoFrameAccess io_frame_access(DomainIdentity caller, uint64_t mfn, const InterruptHardware& hardware) {
    if (!caller.privileged || mfn >= (uint64_t{1} << (kPhysicalAddressBits - kPageShift)))
        return IoFrameAccess::denied;
    if (is_denied_interrupt_frame(mfn, hardware)) return IoFrameAccess::denied;
    if (mfn >= kIoApicFirstMfn && mfn <= kIoApicLastMfn) return IoFrameAccess::read_only;
    return IoFrameAccess::full;
}

bool may_map_frame_of(domid_t page_owner, domid_t frame_owner) {
    return frame_owner == page_owner && (is_guest_domain(frame_owner) || frame_owner == DOMID_XEN);
}

}  // namespace mm
