// The hypervisor's hold on a guest frame it stores into through its own mapping (the direct
// map) rather than through the guest's page tables: a console ring, a registered vcpu_info, a
// hypercall page being filled. As long as a store can happen the hold keeps a general
// reference (the frame stays allocated to its owner) and a Writable type reference: a frame
// with a Writable type count can take no other type, so it can never be validated as a page
// table or a descriptor frame, and no store of the hypervisor's can forge an entry in one.
// Xen holds the same pair for the same frames (get_page_and_type(..., PGT_writable_page) in
// map_vcpu_info, hypercall_init; xenconsoled's writable mapping of the console ring).
//
// Stores through the guest's own virtual addresses (domain/guest_memory) need no hold: they obey
// the guest's own mappings (CR0.WP), which never map a table or a descriptor frame writable.
#pragma once
#include "mm/audit.h"
#include "mm/mmu_context.h"

namespace mm {

struct GuestFrameWriteRef {
  uint64_t mfn = 0;
  bool held = false;
};

// Takes the hold on `mfn`, a frame of `owner`. -EINVAL, nothing taken and `ref` unchanged, if
// `ref` already holds a frame, or the frame is outside the frame table, free, not `owner`'s,
// or cannot be plain writable memory now (a page table, a descriptor frame). A frame whose
// last typed use was a table may still be in the TLB under that use: the context's effects
// and type-change hook say so, as for any type change.
int take_guest_frame_write_ref(MmuContext& context, GuestFrameWriteRef& ref, uint64_t mfn, domid_t owner);

// Gives the hold back (no-op if none is held); the frame is freed if that was its last
// reference (its owner gave it back meanwhile). `ref` then holds nothing.
void release_guest_frame_write_ref(FrameTable& frames, GuestFrameWriteRef& ref);

// What the hold counts, for the frame audit (mm/audit.h); a hold of nothing if none is held.
constexpr ExternalHold audit_hold(const GuestFrameWriteRef& ref) {
  if (!ref.held) return ExternalHold{};
  return ExternalHold{ref.mfn, 1, 1, PageType::Writable};
}

}  // namespace mm
