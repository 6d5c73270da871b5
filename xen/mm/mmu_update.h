#pragma once
#include "mm/entry_update_inline.h"
#include "mm/error.h"
#include "mm/mmu_context.h"
#include "mm/page_refs.h"

namespace mm {

// The parts of mmu_update out of line: the write of a frame that is not a validated table
// (Xen's checked plain write), and every command but a page-table update.
int write_as_data(MmuContext& context, uint64_t mfn, unsigned index, uint64_t value);
int mmu_update_other(MmuContext& context, const mmu_update_t& request);

namespace detail {
inline constexpr uint64_t kCommandMask = sizeof(uint64_t) - 1;

[[gnu::always_inline]] inline bool is_page_table_update(uint64_t command) {
  return command == MMU_NORMAL_PT_UPDATE || command == MMU_PT_UPDATE_NO_TRANSLATE ||
         command == MMU_PT_UPDATE_PRESERVE_AD;
}
}  // namespace detail

// The validated L1 tables of the domain the last page-table updates of a batch wrote
// (mmu_update below). Two: a fork alternates between the parent's table (write-protect) and the
// child's (share), as Linux's copy_pte_range does.
struct BatchTables {
  struct Table {
    uint64_t mfn = ~uint64_t{0};
    PageInfo* frame = nullptr;
  };
  Table recent[2];
  unsigned older = 0;  // the one the next new table replaces

  [[gnu::always_inline]] PageInfo* find(uint64_t mfn) const {
    if (recent[0].mfn == mfn) return recent[0].frame;
    if (recent[1].mfn == mfn) return recent[1].frame;
    return nullptr;
  }
  [[gnu::always_inline]] void remember(uint64_t mfn, PageInfo& frame) {
    recent[older] = Table{mfn, &frame};
    older ^= 1;
  }
  [[gnu::always_inline]] void forget() { *this = BatchTables{}; }
};

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
// Inline: a batch of them is one loop in the hypercall, and a call per request (its frame,
// the arguments moved twice) was a tenth of what the request costs.
//
// `last`: the batch's requests are run in order with the same BatchTables, which remembers the
// validated L1s the last requests updated; a request on one of them (a kernel writes its entries
// a table at a time) skips finding and checking the frame again. That holds because nothing an
// L1 update does can change an L1's owner, type or validation: it takes and drops references
// of data frames only, a Writable type is refused on a frame that is a table in use, and a
// general reference it drops cannot free a table, whose type references each hold one. An
// update of a higher-level table can (unlinking an L1 drops its type references), so it
// forgets them all; a plain write takes a Writable type of a frame that is no table in use,
// and nothing else runs between two requests of a batch.
[[gnu::always_inline]] inline int mmu_update(MmuContext& context, const mmu_update_t& request, BatchTables& last) {
  const uint64_t command = request.ptr & detail::kCommandMask;
  if (!detail::is_page_table_update(command)) [[unlikely]]
    return mmu_update_other(context, request);
  const uint64_t machine_address = request.ptr & ~detail::kCommandMask;
  const uint64_t mfn = machine_address >> kPageShift;
  const unsigned index = static_cast<unsigned>((machine_address & (kPageBytes - 1)) >> 3);
  const bool preserve_accessed_dirty = command == MMU_PT_UPDATE_PRESERVE_AD;
  if (PageInfo* known = last.find(mfn))
    return update_validated_table_entry_inline(context, mfn, *known, index, PageTableEntry(request.val),
                                               preserve_accessed_dirty);
  if (!context.frames.contains(mfn)) return error(XEN_EINVAL);
  PageInfo& frame = context.frames.info(mfn);
  // A validated table of the domain is held for the update by its own type references (each
  // holds a general one), and the update cannot drop them: it releases only what the old entry
  // referenced, tables of the level below and data frames (an entry never references a table
  // of its own level or above: no linear page tables), so no general reference of the frame's
  // own is needed (Xen takes one; the audit checks the counts after every test).
  if (frame.owner == context.domain.id && frame.is_validated_table()) {
    if (frame.type == PageType::L1)
      last.remember(mfn, frame);
    else
      last.forget();
    return update_validated_table_entry_inline(context, mfn, frame, index, PageTableEntry(request.val),
                                               preserve_accessed_dirty);
  }
  // Anything else is a checked plain write, the frame held for its duration (Xen's get_page).
  if (get_page(context.frames, mfn, context.domain.id) != 0) return error(XEN_EINVAL);
  int rc = write_as_data(context, mfn, index, request.val);
  put_page(context.frames, mfn);
  return rc;
}

// One request alone (no batch before it).
[[gnu::always_inline]] inline int mmu_update(MmuContext& context, const mmu_update_t& request) {
  BatchTables none;
  return mmu_update(context, request, none);
}

// Runs `count` requests in order, stopping at the first failure. *done receives the number
// that succeeded; the result is 0 or the failing request's error.
int mmu_update_batch(MmuContext& context, const mmu_update_t* requests, unsigned count, unsigned* done);

}  // namespace mm
