// I/O port access for a guest kernel that raised its virtual IOPL (PHYSDEVOP_set_iopl), as
// Xen does it: the guest runs without I/O privilege, its in/out instructions fault with #GP,
// and the hypervisor decodes and performs them for a privileged domain, refusing the ports
// it drives itself; for an unprivileged one (no I/O port permission) reads give all ones and
// writes are dropped.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "arch/x86/cpu/trap_frame.h"

struct Vcpu;

namespace port_io {
// The decoded form of an in/out instruction with an immediate or DX port, or of a string
// form (ins/outs, port in DX, optionally with rep), with 64-bit addresses and no segment
// override (a flat PV guest has no use for them).
struct Access {
  bool valid = false;
  bool is_out = false;
  bool port_in_dx = false;
  bool string = false;  // ins (to [rdi]) / outs (from [rsi])
  bool rep = false;     // rcx times
  uint8_t immediate_port = 0;
  unsigned width = 0;   // 1, 2 or 4 bytes
  unsigned length = 0;  // instruction bytes
};
Access decode(const uint8_t* bytes, size_t available);  // pure
bool hypervisor_port(uint16_t port);                    // pure: ports the guest never gets

// Handles a #GP from the guest kernel; true if it was an in/out, ins or outs it performed
// (rip advanced, or left on a rep ins/outs that has more to do).
bool emulate(Vcpu& vcpu, TrapFrame& frame);
}  // namespace port_io
