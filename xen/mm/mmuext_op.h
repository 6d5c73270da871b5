#pragma once
#include "mm/mmu_context.h"
#include "mm/vcpu_base_pointers.h"

namespace mm {

// One operation of HYPERVISOR_mmuext_op by context.domain on its own frames, for the vCPU
// whose base pointers are `bases`. Hardware work is reported in context.effects.
//   MMUEXT_PIN_L{1,2,3,4}_TABLE: general + type ref of that level, and the pinned flag.
//     -EINVAL if the frame is not the domain's, already pinned, or in use as another type;
//     validation errors of the table are passed through.
//   MMUEXT_UNPIN_TABLE: drops the pin's refs (which may devalidate the tree below it).
//     -EINVAL if the frame is not the domain's or not pinned.
//   MMUEXT_NEW_BASEPTR: the new kernel L4 takes general + L4 type refs, the old one is
//     released; effects.load_kernel_base. Same MFN as now: only the reload is requested.
//   MMUEXT_NEW_USER_BASEPTR: the same for the user L4; mfn 0 clears it.
//     effects.user_base_changed.
//   MMUEXT_TLB_FLUSH_LOCAL/ALL, MMUEXT_INVLPG_LOCAL/ALL: recorded in effects only.
//   anything else (TLB_FLUSH_MULTI, INVLPG_MULTI, SET_LDT, CLEAR_PAGE, COPY_PAGE,
//   FLUSH_CACHE*, [UN]MARK_SUPER, unknown): -ENOSYS, nothing done. The glue handles the
//   ones it supports (they need guest memory access) before calling here.
// Counts unchanged on failure.
int mmuext_op(MmuContext& context, VcpuBasePointers& bases, const mmuext_op_t& op);

// Runs `count` operations in order, stopping at the first failure (*done = succeeded).
int mmuext_op_batch(MmuContext& context, VcpuBasePointers& bases, const mmuext_op_t* ops, unsigned count,
                    unsigned* done);

// Gives back the refs a vCPU's base pointers hold (vCPU or domain teardown).
void release_base_pointers(FrameTable& frames, VcpuBasePointers& bases);

// Unpins every table `owner` has pinned (domain teardown, Xen's relinquish of pins).
void unpin_all(FrameTable& frames, domid_t owner);

}  // namespace mm
