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

// One request of HYPERVISOR_mmu_update on the tables of context.domain (the caller, or the
// domain the control domain named as pt_dom), mapping frames of context.page_owner.
//   MMU_NORMAL_PT_UPDATE, MMU_PT_UPDATE_NO_TRANSLATE (the same for PV), and
//   MMU_PT_UPDATE_PRESERVE_AD: `ptr` is the machine address of an 8-byte entry. The frame
//     must belong to the domain (-EINVAL otherwise). If it is a validated page table the
//     write goes through update_table_entry under the table's frame lock; otherwise, as in
//     Xen, it is a checked plain write that takes a Writable type for its duration (-EINVAL if
//     the frame has another type in use, e.g. a descriptor table).
//   MMU_MACHPHYS_UPDATE: m2p[ptr >> 12] = val for a frame of the page owner (the domain, or
//     the foreign domain mmu_update named: -EINVAL if not, or if the MFN is beyond the M2P
//     table); -EPERM when the tables updated are not the caller's (Xen's pt_owner != d).
//   anything else: -ENOSYS.
// Inline: a batch of them is one loop in the hypercall, and a call per request (its frame,
// the arguments moved twice) was a tenth of what the request costs.
//
// The frame lock is what holds the table for the update (Xen takes a general reference and
// then the lock): it comes with a type reference, so the table stays a validated table of the
// domain until the update is done, whatever other CPUs do to it meanwhile (unpin it, unlink
// it, free it); its owner, which cannot change while it has a type reference, is checked by the
// lock itself.
//
// `held`: the tables the batch's last updates locked stay locked for the requests after them
// that update the same tables: a kernel writes its entries a table at a time, and a fork
// alternates two, the parent's (write-protect) and the child's (share), as Linux's
// copy_pte_range does. Two at most: the second is taken only by a try (try_lock_any_table),
// and when that fails, or a third table comes, both are given back before the next is waited
// for, so a CPU never waits for a frame lock while it holds one. The caller gives them back
// (HeldTables::release) before it reads guest memory (a read may fault and reattach a detached
// L1 under that L1's lock: domain/guest_access.h), before it preempts the batch and at the
// batch's end, so another CPU's update of one waits for at most the requests the caller read at
// once (run_batch: 256 bytes of them).
struct HeldTables {
  struct Table {
    uint64_t mfn;
    PageInfo* frame;
    PagingLevel level;
  };
  Table tables[2];
  unsigned count = 0;

  [[gnu::always_inline]] const Table* find(uint64_t mfn) const {
    if (count > 0 && tables[0].mfn == mfn) return &tables[0];
    if (count > 1 && tables[1].mfn == mfn) return &tables[1];
    return nullptr;
  }
  [[gnu::always_inline]] const Table& add(uint64_t mfn, PageInfo& frame, PageType type) {
    tables[count] = Table{mfn, &frame, table_level(type)};
    return tables[count++];
  }
  // In the reverse order of taking (the order checker's rule).
  [[gnu::always_inline]] void release(FrameTable& frames) {
    while (count > 0) {
      const Table& table = tables[--count];
      unlock_table(frames, table.mfn, *table.frame);
    }
  }
};

[[gnu::always_inline]] inline int update_held(MmuContext& context, const HeldTables::Table& table, unsigned index,
                                              const mmu_update_t& request, bool preserve_accessed_dirty) {
  return update_locked_table_entry_inline(context, LockedTable{table.mfn, *table.frame, table.level}, index,
                                          PageTableEntry(request.val), preserve_accessed_dirty);
}

[[gnu::always_inline]] inline int mmu_update(MmuContext& context, const mmu_update_t& request, HeldTables& held) {
  const uint64_t command = request.ptr & detail::kCommandMask;
  if (!detail::is_page_table_update(command)) [[unlikely]] {
    held.release(context.frames);
    return mmu_update_other(context, request);
  }
  const uint64_t machine_address = request.ptr & ~detail::kCommandMask;
  const uint64_t mfn = machine_address >> kPageShift;
  const unsigned index = static_cast<unsigned>((machine_address & (kPageBytes - 1)) >> 3);
  const bool preserve_accessed_dirty = command == MMU_PT_UPDATE_PRESERVE_AD;
  if (const HeldTables::Table* table = held.find(mfn)) [[likely]]
    return update_held(context, *table, index, request, preserve_accessed_dirty);
  if (!context.frames.contains(mfn)) {
    held.release(context.frames);
    return error(XEN_EINVAL);
  }
  PageInfo& frame = context.frames.info(mfn);
  if (held.count == 1) {
    if (const PageType type = try_lock_any_table(frame, context.domain.id); type != PageType::None) [[likely]]
      return update_held(context, held.add(mfn, frame, type), index, request, preserve_accessed_dirty);
  }
  held.release(context.frames);
  if (const PageType type = lock_any_table(frame, context.domain.id); type != PageType::None) [[likely]]
    return update_held(context, held.add(mfn, frame, type), index, request, preserve_accessed_dirty);
  // Anything else is a checked plain write, the frame held for its duration (Xen's get_page).
  if (get_page(context.frames, mfn, context.domain.id) != 0) return error(XEN_EINVAL);
  int rc = write_as_data(context, mfn, index, request.val);
  put_page(context.frames, mfn);
  return rc;
}

// One request alone: its table's lock given back at once.
[[gnu::always_inline]] inline int mmu_update(MmuContext& context, const mmu_update_t& request) {
  HeldTables held;
  const int rc = mmu_update(context, request, held);
  held.release(context.frames);
  return rc;
}

// Runs `count` requests in order, stopping at the first failure. *done receives the number
// that succeeded; the result is 0 or the failing request's error.
int mmu_update_batch(MmuContext& context, const mmu_update_t* requests, unsigned count, unsigned* done);

}  // namespace mm
