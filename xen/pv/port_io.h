// I/O port access for guest code its virtual IOPL allows (pv/rules/virtual_iopl.h), as Xen does it:
// the guest runs without I/O privilege, its in/out instructions fault with #GP,
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

// Ports beyond this do not exist: an access reaching past it never wraps to port 0.
constexpr uint32_t last_port = 0xffff;

// Whether a privileged domain may reach every port of [port, port + width - 1] with one access
// (Xen's admin_io_okay over ioports_access_permitted): none of them the hypervisor's, none
// beyond the last port. Pure.
bool range_permitted(uint32_t port, unsigned width);

// How the hypervisor performs one guest access of `width` bytes at `port`, as Xen's
// guest_io_read/guest_io_write do: one access when the whole range is permitted; otherwise
// the range is split, each permitted port read or written on its own (two at a time when an
// even port and the next are both permitted), and each denied one reads as all ones and takes
// no write. An unprivileged domain (no I/O port permission) is denied every port. Pure.
struct PortPiece {
  uint32_t port = 0;
  unsigned width = 0;      // 1, 2 or 4 bytes
  bool permitted = false;  // false: reads give all ones, writes are dropped
};
struct PortPlan {
  PortPiece pieces[4];
  unsigned count = 0;
};
PortPlan plan_access(bool privileged, uint32_t port, unsigned width);

// Whether the vCPU's current code may use I/O instructions (and cli/sti): its virtual IOPL
// against the level it counts as (pv/rules/virtual_iopl.h), as Xen's iopl_ok.
bool iopl_allows(const Vcpu& vcpu);

// Handles a #GP from the guest (kernel or user mode), given the instruction bytes at rip (pv/privileged_op
// fetches them once); true if it was an in/out, ins or outs it performed
// (rip advanced, or left on a rep ins/outs that has more to do).
bool emulate(Vcpu& vcpu, TrapFrame& frame, const uint8_t* bytes, size_t available);
}  // namespace port_io
