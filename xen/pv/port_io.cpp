#include "pv/port_io.h"
#include "arch/x86/cpu/io_port.h"
#include "arch/x86/cpu/rflags.h"
#include "domain/domain.h"
#include "domain/guest_memory.h"
#include "pv/rules/virtual_iopl.h"
#include "abi/xen_abi.h"
#include <xen/xen.h>

namespace port_io {
namespace {
// A rep ins/outs does at most this many elements per trap, then leaves rip on the instruction
// with rcx, rsi/rdi advanced: the CPU restarts it, and the hypervisor is never held for long.
constexpr uint64_t max_elements_per_trap = 4096;

constexpr uint32_t width_mask(unsigned width) { return width >= 4 ? 0xffffffffu : (1u << (8 * width)) - 1; }

uint32_t hardware_in(uint16_t port, unsigned width) {
  switch (width) {
    case 1: return io::in8(port);
    case 2: return io::in16(port);
    default: return io::in32(port);
  }
}

void hardware_out(uint16_t port, unsigned width, uint32_t value) {
  switch (width) {
    case 1: io::out8(port, uint8_t(value)); break;
    case 2: io::out16(port, uint16_t(value)); break;
    default: io::out32(port, value); break;
  }
}

// Every port of the access is checked, not only the first (plan_access): a denied port reads
// as an absent device does, all ones, and its part of a write is dropped, as in Xen's
// guest_io_read/guest_io_write. A domain without I/O port permission (every unprivileged
// one) is denied them all.
uint32_t read_port(bool privileged, uint16_t port, unsigned width) {
  PortPlan plan = plan_access(privileged, port, width);
  uint32_t value = 0;
  unsigned shift = 0;
  for (unsigned i = 0; i < plan.count; ++i) {
    const PortPiece& piece = plan.pieces[i];
    uint32_t part = piece.permitted ? hardware_in(uint16_t(piece.port), piece.width) : 0xffffffffu;
    value |= (part & width_mask(piece.width)) << shift;
    shift += 8 * piece.width;
  }
  return value;
}

void write_port(bool privileged, uint16_t port, unsigned width, uint32_t value) {
  PortPlan plan = plan_access(privileged, port, width);
  unsigned shift = 0;
  for (unsigned i = 0; i < plan.count; ++i) {
    const PortPiece& piece = plan.pieces[i];
    if (piece.permitted) hardware_out(uint16_t(piece.port), piece.width, (value >> shift) & width_mask(piece.width));
    shift += 8 * piece.width;
  }
}

// ins/outs, rep or not: one element per iteration between guest memory and the port. False
// when guest memory is not there (the guest then gets the #GP, with the registers saying how
// far it got).
bool emulate_string(Vcpu& vcpu, TrapFrame& frame, const Access& access, bool privileged) {
  uint16_t port = uint16_t(frame.rdx);
  uint64_t count = access.rep ? frame.rcx : 1;
  uint64_t batch = count < max_elements_per_trap ? count : max_elements_per_trap;
  int64_t step = (frame.rflags & rflags::direction) ? -int64_t(access.width) : int64_t(access.width);
  uint64_t& address = access.is_out ? frame.rsi : frame.rdi;
  for (uint64_t i = 0; i < batch; ++i) {
    uint32_t value = 0;
    if (access.is_out) {
      if (!guest_memory::copy_from(vcpu, &value, address, access.width)) return false;
      write_port(privileged, port, access.width, value);
    } else {
      value = read_port(privileged, port, access.width);
      if (!guest_memory::copy_to(vcpu, address, &value, access.width)) return false;
    }
    address += uint64_t(step);
    if (access.rep) --frame.rcx;
  }
  if (batch == count) frame.rip += access.length;  // done; otherwise the CPU re-executes it
  return true;
}
}  // namespace

bool iopl_allows(const Vcpu& vcpu) {
  const bool architectural = vcpu.domain->vm_assist & (1ul << VMASST_TYPE_architectural_iopl);
  return virtual_iopl::allows(vcpu.iopl, vcpu.kernel_mode, architectural);
}

bool emulate(Vcpu& vcpu, TrapFrame& frame, const uint8_t* bytes, size_t available) {
  if (!iopl_allows(vcpu)) return false;
  bool privileged = vcpu.domain->privileged;
  Access access = decode(bytes, available);
  if (!access.valid) return false;
  if (access.string) return emulate_string(vcpu, frame, access, privileged);
  uint16_t port = access.port_in_dx ? uint16_t(frame.rdx) : access.immediate_port;
  if (access.is_out) {
    write_port(privileged, port, access.width, uint32_t(frame.rax));
  } else {
    uint32_t value = read_port(privileged, port, access.width);
    uint64_t mask = access.width == 4 ? 0xffffffffULL : (1ULL << (8 * access.width)) - 1;
    // A 32-bit result zero-extends into rax, as the CPU does; narrower ones merge.
    frame.rax = access.width == 4 ? value : (frame.rax & ~mask) | (value & mask);
  }
  frame.rip += access.length;
  return true;
}
}  // namespace port_io
