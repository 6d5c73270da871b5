#pragma once
#include "mm/domain_identity.h"
#include "mm/frame_table.h"
#include "mm/hypervisor_slots.h"
#include "mm/interrupt_hardware.h"
#include "mm/mmu_effects.h"

namespace mm {

// The machine-to-phys table (indexed by MFN), writable by the hypervisor.
struct MachToPhysTable {
  uint64_t* entries = nullptr;
  uint64_t nr_entries = 0;
};

// Called synchronously when a frame whose type count was zero takes a different type, before
// the frame is validated or used as the new type: CPUs that ran the domain may still hold TLB
// or paging-structure-cache entries from the old use (e.g. a writable mapping of a frame that
// is about to become a page table), and they must be flushed before validation reads it.
// Xen does this flush inline in _get_page_type; the glue may filter it by a flush clock.
struct TypeChangeHook {
  void (*flush)(void* cookie, uint64_t mfn, PageType old_type, PageType new_type) = nullptr;
  void* cookie = nullptr;
};

// Everything one MMU operation works on. Built by the hypercall glue per call (or per batch)
// while it holds the lock that serialises page-table updates of the domain.
struct MmuContext {
  FrameTable& frames;
  DomainIdentity domain;
  const HypervisorL4Slots& hypervisor_slots;
  MachToPhysTable m2p{};
  MmuEffects effects{};
  TypeChangeHook type_change{};
  // Whose frames L1 entries may map: DOMID_SELF (the caller's), or the foreign domain
  // mmu_update named (its `foreigndom`, checked by the hypercall: a guest domain or
  // DOMID_XEN for privileged callers, DOMID_IO for anyone).
  domid_t page_owner = DOMID_SELF;
  // False when `domain` is not the caller: the control domain updates another domain's
  // tables (mmu_update's pt_dom). MMU_MACHPHYS_UPDATE is then -EPERM, as Xen's.
  bool tables_of_caller = true;
  // The interrupt hardware no domain may program (io_frame_access): set from the machine.
  InterruptHardware interrupt_hardware{};

  domid_t owner_of_mapped_frames() const { return page_owner == DOMID_SELF ? domain.id : page_owner; }
};

}  // namespace mm
