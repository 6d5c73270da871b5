#include "pv/rules/debug_registers.h"
#include "abi/xen_abi.h"
#include "pv/rules/guest_address.h"

namespace debug_registers {
namespace {
constexpr uint64_t kDr6ReservedOne = 0xffff0ff0, kDr6Valid = 0xffffefff;  // bit 12 reads 0
constexpr uint64_t kDr7ReservedOne = 0x400, kDr7Valid = 0xffff27ff;       // bits 11, 12, 14, 15 read 0
constexpr uint64_t kGeneralDetect = 1u << 13;
constexpr unsigned kIoBreakpoint = 2;           // R/W bits 10
constexpr unsigned kInstructionBreakpoint = 0;  // R/W bits 00

unsigned breakpoint_type(uint64_t dr7, unsigned breakpoint) { return (dr7 >> (16 + 4 * breakpoint)) & 3; }
bool enabled(uint64_t dr7, unsigned breakpoint) { return dr7 & (3u << (2 * breakpoint)); }

long set_dr7(State& state, uint64_t value, bool cr4_de) {
  if (value != uint32_t(value)) return -XEN_EINVAL;
  value = (value & kDr7Valid) | kDr7ReservedOne;
  if (value & kGeneralDetect) return -XEN_EPERM;
  uint64_t io_enable = 0;
  if (active(value)) {
    for (unsigned breakpoint = 0; breakpoint < 4; ++breakpoint) {
      if (breakpoint_type(value, breakpoint) != kIoBreakpoint) continue;
      if (!cr4_de) return -XEN_EPERM;
      io_enable |= value & (3u << (2 * breakpoint));
    }
  }
  state.dr7_emulated = io_enable;
  state.dr7 = value & ~io_enable;
  return 0;
}
}  // namespace

long set(State& state, unsigned reg, uint64_t value, bool cr4_de) {
  switch (reg) {
    case 0:
    case 1:
    case 2:
    case 3:
      if (!guest_address::addr_ok(value)) return -XEN_EPERM;
      state.dr[reg] = value;
      return 0;
    case 4:
      if (cr4_de) return -XEN_ENODEV;
      [[fallthrough]];
    case 6:
      if (value != uint32_t(value)) return -XEN_EINVAL;
      state.dr6 = (value & kDr6Valid) | kDr6ReservedOne;
      return 0;
    case 5:
      if (cr4_de) return -XEN_ENODEV;
      [[fallthrough]];
    case 7: return set_dr7(state, value, cr4_de);
    default: return -XEN_ENODEV;
  }
}

long get(const State& state, unsigned reg, bool cr4_de, uint64_t& value) {
  switch (reg) {
    case 0:
    case 1:
    case 2:
    case 3: value = state.dr[reg]; return 0;
    case 4:
      if (cr4_de) return -XEN_ENODEV;
      [[fallthrough]];
    case 6: value = state.dr6; return 0;
    case 5:
      if (cr4_de) return -XEN_ENODEV;
      [[fallthrough]];
    case 7: value = state.dr7 | state.dr7_emulated; return 0;
    default: return -XEN_ENODEV;
  }
}

void record_status(State& state, uint64_t reported) {
  state.dr6 |= reported & ~kDr6Default;
  state.dr6 &= reported | ~kDr6Default;
}

bool instruction_breakpoint_hit(uint64_t reported, uint64_t loaded) {
  for (unsigned breakpoint = 0; breakpoint < 4; ++breakpoint)
    if ((reported & (1u << breakpoint)) && enabled(loaded, breakpoint) &&
        breakpoint_type(loaded, breakpoint) == kInstructionBreakpoint)
      return true;
  return false;
}
}  // namespace debug_registers
