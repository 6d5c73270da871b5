#include "pv/port_io.h"

namespace port_io {
Access decode(const uint8_t* bytes, size_t available) {
  Access access;
  size_t at = 0;
  bool operand_16 = false, rep = false;
  // Operand size and rep, each at most once, in either order.
  for (; at < available && at < 2; ++at) {
    if (bytes[at] == 0x66 && !operand_16)
      operand_16 = true;
    else if (bytes[at] == 0xf3 && !rep)
      rep = true;
    else
      break;
  }
  if (at >= available) return access;
  uint8_t opcode = bytes[at++];
  switch (opcode) {
    case 0xe4:
    case 0xe5:
    case 0xe6:
    case 0xe7:  // in/out with an 8-bit immediate port
      if (at >= available) return access;
      access.immediate_port = bytes[at++];
      break;
    case 0xec:
    case 0xed:
    case 0xee:
    case 0xef:  // in/out with the port in DX
      access.port_in_dx = true;
      break;
    case 0x6c:
    case 0x6d:
    case 0x6e:
    case 0x6f:  // ins/outs: port in DX, memory at rdi/rsi
      access.port_in_dx = true;
      access.string = true;
      access.rep = rep;
      break;
    default: return access;
  }
  if (rep && !access.string) return access;  // rep in/out is not an instruction we know
  access.is_out = (opcode & 0x02) != 0;      // e6/e7/ee/ef and 6e/6f: bit 1 says "out"
  access.width = (opcode & 0x01) ? (operand_16 ? 2 : 4) : 1;
  access.length = unsigned(at);
  access.valid = true;
  return access;
}

// The serial console, the PICs, the PIT and speaker gate, the CMOS clock and the exit device:
// the hypervisor drives them, and a guest writing them could take its timer or console away.
bool hypervisor_port(uint16_t port) {
  return (port >= 0x3f8 && port <= 0x3ff) || port == 0x20 || port == 0x21 || port == 0xa0 || port == 0xa1 ||
         (port >= 0x40 && port <= 0x43) || port == 0x61 || port == 0x70 || port == 0x71 ||
         (port >= 0xf4 && port <= 0xf7);
}

bool range_permitted(uint32_t port, unsigned width) {
  if (width == 0 || port > last_port || width - 1 > last_port - port) return false;
  for (uint32_t at = port; at < port + width; ++at)
    if (hypervisor_port(uint16_t(at))) return false;
  return true;
}

PortPlan plan_access(bool privileged, uint32_t port, unsigned width) {
  PortPlan plan;
  if (!privileged) {
    plan.pieces[plan.count++] = PortPiece{port, width, false};
    return plan;
  }
  if (range_permitted(port, width)) {
    plan.pieces[plan.count++] = PortPiece{port, width, true};
    return plan;
  }
  for (unsigned done = 0; done < width && plan.count < 4;) {
    uint32_t at = port + done;
    unsigned left = width - done;
    PortPiece piece{at, 1, range_permitted(at, 1)};
    if (piece.permitted && left > 1 && (at & 1) == 0 && range_permitted(at, 2)) piece.width = 2;
    plan.pieces[plan.count++] = piece;
    done += piece.width;
  }
  return plan;
}
}  // namespace port_io
