// Bounce frames: how the hypervisor delivers exceptions, events and system calls to a PV
// guest kernel. The layout is Xen's 64-bit PV one, built on the guest kernel stack:
// { RCX, R11, [ERRCODE,] RIP, CS (saved upcall mask in bits 32-39), RFLAGS, RSP, SS }.
#pragma once
#include <stdint.h>
#include "arch/x86/cpu/trap_frame.h"

struct Vcpu;

namespace pv {
struct Bounce {
  uint64_t handler = 0;
  bool has_error_code = false;
  uint32_t error_code = 0;
  bool mask_events = false;  // interrupt-gate semantics: set the upcall mask
};

// Rewrites `frame` so the guest kernel continues at the handler. Returns false when the guest
// stack cannot take the frame or there is no handler; the caller then crashes the domain.
bool create_bounce_frame(Vcpu& vcpu, TrapFrame& frame, const Bounce& bounce);
}  // namespace pv
