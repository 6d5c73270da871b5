#include "pv/port_io.h"
#include "arch/x86/cpu/io_port.h"
#include "domain/domain.h"
#include "pv/guest_memory.h"

namespace port_io {
namespace {
constexpr size_t max_bytes = 3;  // 0x66, opcode, imm8

// A domain without I/O port permission (every unprivileged one) reads all ones and its
// writes are dropped, as Xen's guest_io_read/guest_io_write do without ioports_access.
uint32_t read_port(bool permitted, uint16_t port, unsigned width) {
  if (!permitted || hypervisor_port(port)) return 0xffffffff;  // as an absent device reads
  switch (width) {
    case 1: return io::in8(port);
    case 2: return io::in16(port);
    default: return io::in32(port);
  }
}

void write_port(bool permitted, uint16_t port, unsigned width, uint32_t value) {
  if (!permitted || hypervisor_port(port)) return;  // dropped
  switch (width) {
    case 1: io::out8(port, uint8_t(value)); break;
    case 2: io::out16(port, uint16_t(value)); break;
    default: io::out32(port, value); break;
  }
}
}  // namespace

bool emulate(Vcpu& vcpu, TrapFrame& frame) {
  if (!vcpu.kernel_mode || vcpu.iopl == 0) return false;
  bool permitted = vcpu.domain->privileged;
  uint8_t bytes[max_bytes] = {};
  size_t available = 0;
  while (available < max_bytes && guest_memory::copy_from(vcpu, &bytes[available], frame.rip + available, 1))
    ++available;
  Access access = decode(bytes, available);
  if (!access.valid) return false;
  uint16_t port = access.port_in_dx ? uint16_t(frame.rdx) : access.immediate_port;
  if (access.is_out) {
    write_port(permitted, port, access.width, uint32_t(frame.rax));
  } else {
    uint32_t value = read_port(permitted, port, access.width);
    uint64_t mask = access.width == 4 ? 0xffffffffULL : (1ULL << (8 * access.width)) - 1;
    // A 32-bit result zero-extends into rax, as the CPU does; narrower ones merge.
    frame.rax = access.width == 4 ? value : (frame.rax & ~mask) | (value & mask);
  }
  frame.rip += access.length;
  return true;
}
}  // namespace port_io
