// Pure: XEN_DOMCTL_setvcpuaffinity / getvcpuaffinity as Xen 4.17's vcpu_affinity_domctl answers
// them (xen/common/sched/core.c), on a vCPU's hard and soft affinity (Vcpu::hard_affinity,
// soft_affinity). The glue (hypercall/domctl.cpp) copies the guest's bitmaps in and out.
// Unit-tested (tests/unit/control_vcpu_affinity_test.cpp).
//
// Xen's rules, in order: a vCPU id at or beyond max_vcpus -EINVAL, a vCPU slot not made -ESRCH;
// flags 0, or a flag whose bitmap handle is null, -EINVAL (flags other than HARD and SOFT are
// otherwise ignored: FORCE alone is a successful no-op here, where nothing overrides affinity).
// A bitmap is read as nr_bits bits of bytes (bits past nr_bits in its last byte cleared), at
// most nr_cpu_ids of them (a longer one's extra bytes are not read, a shorter one's missing bits
// are 0). A new hard affinity without an online CPU is -EINVAL and changes nothing; a soft one
// is kept as given (its effective part may be empty). The answer's bitmaps: hard & online; soft
// & online & hard. getvcpuaffinity gives the masks as stored (offline CPUs included). A written
// bitmap fills the caller's nr_bits: the first nr_cpu_ids bits, zero bytes after them.
#pragma once
#include <stdint.h>
#include "arch/x86/cpu/cpu_mask.h"
#include "control/control_abi.h"

namespace control {
// The mask a guest's bitmap of `nr_bits` bits (its first `bytes` bytes as read) names, cut to
// `nr_cpu_ids` CPUs. `bytes` holds bitmap_read_bytes(nr_bits, nr_cpu_ids) bytes.
uint32_t bitmap_read_bytes(uint32_t nr_bits, uint32_t nr_cpu_ids);
CpuMask mask_from_bitmap(const uint8_t* bytes, uint32_t nr_bits, uint32_t nr_cpu_ids);

// The bytes Xen writes back into a bitmap of `nr_bits` bits: bitmap_write_bytes of them, the
// first ones the mask's (cut to nr_cpu_ids bits), the rest zero. `out` has room for that many.
uint32_t bitmap_write_bytes(uint32_t nr_bits);
void bitmap_from_mask(CpuMask mask, uint32_t nr_cpu_ids, uint8_t* out, uint32_t out_bytes);

// The checks before any bitmap is read.
long check_vcpu_affinity_request(uint32_t vcpu, uint32_t max_vcpus, bool vcpu_exists, uint32_t flags,
                                 bool hard_handle_null, bool soft_handle_null);

struct AffinityChange {
  long error = 0;              // -EINVAL for a hard mask without an online CPU
  CpuMask hard, soft;          // the vCPU's masks afterwards (unchanged on error)
  CpuMask hard_out, soft_out;  // what the answer's bitmaps say (for the flags given)
};
// setvcpuaffinity on masks already read (given_hard / given_soft are used when their flag is set).
AffinityChange set_vcpu_affinity(CpuMask hard, CpuMask soft, uint32_t flags, CpuMask given_hard, CpuMask given_soft,
                                 CpuMask online);
}  // namespace control
