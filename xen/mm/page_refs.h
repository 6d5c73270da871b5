#pragma once
#include "mm/mmu_context.h"

namespace mm {

// General references: "this frame must stay allocated to its owner while I use it".
// Fails with -EINVAL if the frame does not exist, is free, belongs to another domain than
// `owner`, or its count would overflow. Count unchanged on failure.
int get_page(FrameTable& frames, uint64_t mfn, domid_t owner);
// Drops one general reference. The last one frees the frame (owner becomes kNoOwner, all
// state reset) and calls the frame table's release hook.
void put_page(FrameTable& frames, uint64_t mfn);

// Type references: "this frame must stay of this type while I rely on it". The caller must
// hold a general reference. With a zero type count the frame may change type; a page-table
// type is then validated (all its entries checked and their references taken) before the
// reference is granted. -EINVAL on type mismatch or overflow; validation errors are passed
// through. On failure every count and the frame's type are as before.
int get_page_type(MmuContext& context, uint64_t mfn, PageType type);
// Drops one type reference. Dropping the last one of a validated page table releases every
// reference its entries hold (recursively) and clears `validated`.
void put_page_type(FrameTable& frames, uint64_t mfn);

// Both, as Xen's get_page_and_type: the general ref is rolled back if the type ref fails.
int get_page_and_type(MmuContext& context, uint64_t mfn, domid_t owner, PageType type);
void put_page_and_type(FrameTable& frames, uint64_t mfn);

// Releases the reference the owner's allocation holds (domain teardown, ballooning). The
// frame is freed once the last other holder lets go.
void drop_allocation(FrameTable& frames, uint64_t mfn);

}  // namespace mm
