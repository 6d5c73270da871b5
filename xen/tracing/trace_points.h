// Trace points that cost one instruction while tracing is off. Each site is a 5-byte NOP
// followed by the untraced path; the recording code sits out of line. Enabling the buffers
// patches every site into a jump to its recording code, disabling patches the NOPs back (the
// technique of Linux's jump labels). A load-and-branch test costs two instructions and keeps
// registers live for the record's arguments; under -icount, where the fork benchmarks are
// measured, every instruction counts.
//
// Each site is listed in the .trace_points section as {site address, recording address}.
#pragma once
#include <stdint.h>

namespace trace_points {
struct Site {
  uint64_t address;  // the 5-byte NOP
  uint64_t target;   // the recording code it jumps to while tracing is on
};

// False in the image built with PVHV_TRACE_POINTS=0 (build/xen/xen-untraced): no site exists.
#if defined(PVHV_TRACE_POINTS) && PVHV_TRACE_POINTS == 0
inline constexpr bool compiled_in = false;
#else
inline constexpr bool compiled_in = true;
#endif

// True where tracing is on; compiles to the NOP (or, once patched, the JMP).
[[gnu::always_inline]] inline bool on() {
#if defined(PVHV_TRACE_POINTS) && PVHV_TRACE_POINTS == 0
  return false;
#else
  asm goto(
      "1: .byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n\t"
      ".pushsection .trace_points, \"a\"\n\t"
      ".balign 8\n\t"
      ".quad 1b, %l[recording]\n\t"
      ".popsection"
      :
      :
      :
      : recording);
  return false;
recording:
  return true;
#endif
}

// Patches every site: a jump while `on`, the NOP otherwise. Returns the number of sites. The
// caller keeps every other CPU away from the code meanwhile (tracing/control's rendezvous).
unsigned switch_all(bool on);
}  // namespace trace_points
