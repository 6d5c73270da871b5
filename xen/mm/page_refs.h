#pragma once
#include "mm/error.h"
#include "mm/mmu_context.h"

namespace mm {

// General references: "this frame must stay allocated to its owner while I use it".
// Fails with -EINVAL if the frame does not exist, is free, belongs to another domain than
// `owner`, or its count would overflow. Count unchanged on failure.
// (Inline, as the type references below: every PTE write takes and drops some.)
inline int get_page(FrameTable& frames, uint64_t mfn, domid_t owner) {
  if (!frames.contains(mfn)) return error(XEN_EINVAL);
  PageInfo& page = frames.info(mfn);
  if (page.is_free() || page.owner != owner) return error(XEN_EINVAL);
  if (page.general_refs == kMaxReferences) return error(XEN_EINVAL);
  ++page.general_refs;
  return 0;
}
// Drops one general reference. The last one frees the frame (owner becomes kNoOwner, all
// state reset) and calls the frame table's release hook.
inline void put_page(FrameTable& frames, uint64_t mfn) {
  PageInfo& page = frames.info(mfn);
  if (page.general_refs == 0) return;  // a bookkeeping bug; the audit will report it
  if (--page.general_refs != 0) return;
  frames.release(mfn);
}

// Type references: "this frame must stay of this type while I rely on it". The caller must
// hold a general reference. With a zero type count the frame may change type; a page-table
// type is then validated (all its entries checked and their references taken) before the
// reference is granted. -EINVAL on type mismatch or overflow; validation errors are passed
// through. On failure every count and the frame's type are as before.
// The first reference (type count 0 -> 1: a type change, a validation) is out of line.
int take_first_type_ref(MmuContext& context, uint64_t mfn, PageType type);
inline int get_page_type(MmuContext& context, uint64_t mfn, PageType type) {
  if (!context.frames.contains(mfn) || type == PageType::None) return error(XEN_EINVAL);
  PageInfo& page = context.frames.info(mfn);
  if (page.type_refs == 0) return take_first_type_ref(context, mfn, type);
  if (page.type != type || !page.validated) return error(XEN_EINVAL);
  if (page.type_refs == kMaxReferences) return error(XEN_EINVAL);
  ++page.type_refs;
  return 0;
}
// Drops one type reference. Dropping the last one of a validated page table releases every
// reference its entries hold (recursively) and clears `validated` (release_table_type, out of
// line).
void release_table_type(FrameTable& frames, uint64_t mfn);
[[gnu::always_inline]] inline void put_page_type(FrameTable& frames, uint64_t mfn) {
  PageInfo& page = frames.info(mfn);
  if (page.type_refs == 0) return;  // a bookkeeping bug; the audit will report it
  if (page.type_refs == 1 && is_page_table(page.type) && page.validated) release_table_type(frames, mfn);
  // Every drop, not only the last: update_va_mapping may take back the stamp of a drop whose
  // translation the caller invalidates at once, and the stamp must then still say when the
  // frame last lost a reference that can leave something stale behind.
  --page.type_refs;
  page.flush_stamp = frames.flush_clock().now();
}

// Both, as Xen's get_page_and_type: the general ref is rolled back if the type ref fails.
int get_page_and_type(MmuContext& context, uint64_t mfn, domid_t owner, PageType type);
void put_page_and_type(FrameTable& frames, uint64_t mfn);

// Releases the reference the owner's allocation holds (domain teardown, ballooning). The
// frame is freed once the last other holder lets go.
void drop_allocation(FrameTable& frames, uint64_t mfn);

}  // namespace mm
