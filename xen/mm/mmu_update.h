#pragma once
#include "mm/mmu_context.h"

namespace mm {

// One request of HYPERVISOR_mmu_update on the tables of context.domain (the caller, or the
// domain the control domain named as pt_dom), mapping frames of context.page_owner.
//   MMU_NORMAL_PT_UPDATE, MMU_PT_UPDATE_NO_TRANSLATE (the same for PV), and
//   MMU_PT_UPDATE_PRESERVE_AD: `ptr` is the machine address of an 8-byte entry. The frame
//     must belong to the domain (-EINVAL otherwise). If it is a validated page table the
//     write goes through update_table_entry; otherwise, as in Xen, it is a checked plain
//     write that takes a Writable type for its duration (-EINVAL if the frame has another
//     type in use, e.g. a descriptor table).
//   MMU_MACHPHYS_UPDATE: m2p[ptr >> 12] = val for a frame of the page owner (the domain, or
//     the foreign domain mmu_update named: -EINVAL if not, or if the MFN is beyond the M2P
//     table); -EPERM when the tables updated are not the caller's (Xen's pt_owner != d).
//   anything else: -ENOSYS.
int mmu_update(MmuContext& context, const mmu_update_t& request);

// Runs `count` requests in order, stopping at the first failure. *done receives the number
// that succeeded; the result is 0 or the failing request's error.
int mmu_update_batch(MmuContext& context, const mmu_update_t* requests, unsigned count,
                     unsigned* done);

}  // namespace mm
