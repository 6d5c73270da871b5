#pragma once
#include "mm/domain_identity.h"
#include "mm/error.h"
#include "mm/hypervisor_slots.h"
#include "mm/interrupt_hardware.h"
#include "mm/page_table_entry.h"

namespace mm {

// Xen marks L1 entries the guest wrote without _PAGE_USER with this software bit
// (_PAGE_GUEST_KERNEL), after forcing _PAGE_USER on: a 64-bit PV kernel runs in ring 3.
inline constexpr uint64_t kGuestKernelMarker = uint64_t{1} << 52;

// Flags a guest may set in any present entry. Cache-control bits (PWT, PCD, PAT/PS) and
// Global are refused except Global in L1: no superpages, and Xen's base_disallow_mask for a
// domain without iomem access (dom0's I/O mappings too, here; see xen/mm/README.md).
inline constexpr uint64_t kGuestSettableFlags = PageTableEntry::kPresent | PageTableEntry::kWritable |
                                                PageTableEntry::kUser | PageTableEntry::kAccessed |
                                                PageTableEntry::kDirty | PageTableEntry::kAvailableLow |
                                                PageTableEntry::kAvailableHigh | PageTableEntry::kNoExecute;

constexpr uint64_t guest_settable_flags(PagingLevel level) {
  return level == PagingLevel::L1 ? kGuestSettableFlags | PageTableEntry::kGlobal : kGuestSettableFlags;
}

// Flags whose change leaves an existing mapping's meaning for isolation intact, so the entry
// may be rewritten without taking or dropping references (Xen's FASTPATH_FLAG_WHITELIST).
// Not RW, at any level: a directory entry may be a linear one (mm/linear_tables.h), which is
// only ever read-only, so flipping its RW must be checked as a new entry (XSA-182; Xen's
// FASTPATH_PDE_FLAG_WHITELIST with CONFIG_PV_LINEAR_PT).
constexpr uint64_t flags_changeable_without_revalidation(PagingLevel) {
  return PageTableEntry::kNoExecute | PageTableEntry::kAvailableHigh | PageTableEntry::kAvailableLow |
         PageTableEntry::kGlobal | PageTableEntry::kDirty | PageTableEntry::kAccessed | PageTableEntry::kUser;
}

// The rules below are inline: every PTE write (hypercall, emulated, re-validation) runs them,
// and a call per rule costs more than the rule.

// L4 slots a guest may fill; the others are the hypervisor's (see hypervisor_slots.h).
constexpr bool is_guest_l4_slot(unsigned index) { return index < kEntriesPerTable && !is_hypervisor_l4_slot(index); }

// Checks the bits of a present guest entry: 0, or -EINVAL for any flag the guest may not set
// at that level (PS in L2/L3/L4, PWT/PCD/PAT, G above L1) or, above L1, reserved address bits
// (51:40). In an L1 such an address is simply not RAM: the I/O rules answer (-EPERM).
// Software-available bits (9-11, 52-62) are the guest's, as in Xen 4.17 (no _PAGE_GNTTAB).
constexpr int check_entry_bits(PagingLevel level, PageTableEntry entry) {
  if (level != PagingLevel::L1 && entry.reserved_address_bits()) return error(XEN_EINVAL);
  if (entry.has_any(entry.flags() & ~guest_settable_flags(level))) return error(XEN_EINVAL);
  return 0;
}

// The form stored in the table: every present entry gets User (the guest kernel runs in
// ring 3), L4 entries also Accessed; L1 kernel mappings (written without User) are marked
// with kGuestKernelMarker and lose Global, so they cannot survive a switch to the user
// page table in the TLB. Applying it twice gives the same entry.
constexpr PageTableEntry adjust_guest_entry(PagingLevel level, PageTableEntry entry) {
  if (!entry.present()) return entry;
  switch (level) {
    case PagingLevel::L1:
      if (!entry.user()) entry = entry.with_flags(PageTableEntry::kUser | kGuestKernelMarker);
      if (entry.has(kGuestKernelMarker)) entry = entry.without_flags(PageTableEntry::kGlobal);
      return entry;
    case PagingLevel::L4: return entry.with_flags(PageTableEntry::kUser | PageTableEntry::kAccessed);
    default: return entry.with_flags(PageTableEntry::kUser);
  }
}

// True if an installed entry `old` can be replaced by `replacement` (both already adjusted)
// without touching reference counts: same frame, both present, only harmless flags differ.
constexpr bool is_harmless_change(PagingLevel level, PageTableEntry old, PageTableEntry replacement) {
  if (!old.present() || !replacement.present()) return false;
  uint64_t changed = old.raw() ^ replacement.raw();
  return (changed & ~flags_changeable_without_revalidation(level)) == 0;
}

// How an L1 entry may map machine frame `mfn` that is not RAM (outside the frame table or
// owned by DOMID_IO), as Xen's get_page_from_l1e decides with the domain's I/O-memory
// permission: an unprivileged domain not at all, and nothing beyond the physical address
// width (-EPERM); dom0 everything else except the interrupt hardware (see
// interrupt_hardware.h): the local APIC page, the MSI range and the HyperTransport window are
// denied (-EPERM), the IO-APICs are read-only (a writable mapping loses RW, as Xen's "flip").
// Such mappings hold no references.
enum class IoFrameAccess : uint8_t { denied, read_only, full };
IoFrameAccess io_frame_access(DomainIdentity caller, uint64_t mfn, const InterruptHardware& hardware);
// The frames of `hardware` no domain may map at all. Pure, for the tests and io_frame_access.
bool is_denied_interrupt_frame(uint64_t mfn, const InterruptHardware& hardware);
inline bool may_map_io_frame(DomainIdentity caller, uint64_t mfn, const InterruptHardware& hardware) {
  return io_frame_access(caller, mfn, hardware) != IoFrameAccess::denied;
}

// Whether an L1 entry written on behalf of `page_owner` may map a frame owned by
// `frame_owner`. As in Xen, an operation maps the frames of one domain only: the caller's
// own, or those of the foreign domain it named in mmu_update (a guest domain, or DOMID_XEN for
// hypervisor pages shared with privileged domains); who may name whom is the hypercall's
// check. Never I/O (that is may_map_io_frame) or unowned frames.
constexpr bool may_map_frame_of(domid_t page_owner, domid_t frame_owner) {
  return frame_owner == page_owner && (is_guest_domain(frame_owner) || frame_owner == DOMID_XEN);
}

}  // namespace mm
