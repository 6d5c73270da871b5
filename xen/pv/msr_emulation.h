// rdmsr / wrmsr from a PV guest kernel, as Xen 4.17's emul-priv-op.c serves them: the guest
// runs in ring 3, so these fault with #GP and the hypervisor decides. Served today: the
// segment bases a 64-bit PV kernel owns (FS_BASE, GS_BASE: the kernel's own, SHADOW_GS_BASE:
// user mode's), as Linux's startup_xen writes GS_BASE before anything else; a non-canonical
// base, any other MSR and any write the policy does not allow stay the guest's #GP.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "arch/x86/cpu/registers.h"

namespace msr_emulation {

// The decoded instruction: 0f 30 (wrmsr) or 0f 32 (rdmsr), optionally after one REX prefix.
enum class Instruction { none, rdmsr, wrmsr };
struct Decoded {
  Instruction instruction = Instruction::none;
  unsigned length = 0;
};
Decoded decode(const uint8_t* bytes, size_t available);

// The bases as the guest kernel sees them (it is in kernel mode when it executes these).
struct SegmentBases {
  uint64_t fs = 0;
  uint64_t gs_kernel = 0;
  uint64_t gs_user = 0;
};

// false: the guest's #GP. true: `value` read, or `bases` updated.
bool read(uint32_t msr, const SegmentBases& bases, uint64_t& value);
bool write(uint32_t msr, uint64_t value, SegmentBases& bases);

}  // namespace msr_emulation
