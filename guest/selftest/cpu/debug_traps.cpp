#include "selftest/cpu/debug_traps.h"
#include "arch/hypercall.h"
#include "arch/xen.h"

extern "C" char probe_breakpoints[], probe_breakpoints_end[];

namespace kernel::debug_traps {
namespace {
constexpr uint64_t kDebug = 1, kBreakpoint = 3;
constexpr uint64_t kDr6Default = 0xffff0ff0;
constexpr uint64_t kTrapFlag = 1u << 8, kResumeFlag = 1u << 16;

Trap traps[kCapacity];
unsigned recorded = 0;

bool in_probes(uint64_t rip) {
  return rip >= reinterpret_cast<uint64_t>(probe_breakpoints) &&
         rip <= reinterpret_cast<uint64_t>(probe_breakpoints_end);
}
}  // namespace

void clear() { recorded = 0; }
unsigned count() { return recorded; }
const Trap& at(unsigned index) { return traps[index]; }

bool record(TrapFrame& frame) {
  if ((frame.vector != kDebug && frame.vector != kBreakpoint) || !in_probes(frame.rip)) return false;
  uint64_t dr6 = 0;
  if (frame.vector == kDebug) {
    dr6 = uint64_t(arch::hypercall(__HYPERVISOR_get_debugreg, 6));
    arch::hypercall(__HYPERVISOR_set_debugreg, 6, kDr6Default);
    frame.rflags = (frame.rflags | kResumeFlag) & ~kTrapFlag;
  }
  if (recorded < kCapacity) traps[recorded] = Trap{frame.vector, frame.rip, dr6};
  ++recorded;
  return true;
}
}  // namespace kernel::debug_traps
