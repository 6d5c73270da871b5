// The bytes a trace point holds: a 5-byte NOP while tracing is off, a 5-byte JMP rel32 to its
// recording code while it is on. Pure, so the encodings are unit-tested on the host.
#pragma once
#include <stdint.h>

namespace trace_points {
constexpr unsigned site_bytes = 5;

struct SiteBytes {
  uint8_t bytes[site_bytes];
};

// `nopl 0x0(%rax,%rax,1)`: one instruction, the form the assembler also emits at each site.
constexpr SiteBytes nop_bytes() { return SiteBytes{{0x0f, 0x1f, 0x44, 0x00, 0x00}}; }

// `jmp target` placed at `site`; false when the displacement does not fit in 32 bits (cannot
// happen inside one image, checked anyway: a wrong jump would be a hypervisor crash).
constexpr bool jump_bytes(uint64_t site, uint64_t target, SiteBytes& out) {
  int64_t displacement = int64_t(target - (site + site_bytes));
  if (displacement < INT32_MIN || displacement > INT32_MAX) return false;
  uint32_t rel = uint32_t(int32_t(displacement));
  out = SiteBytes{{0xe9, uint8_t(rel), uint8_t(rel >> 8), uint8_t(rel >> 16), uint8_t(rel >> 24)}};
  return true;
}
}  // namespace trace_points
