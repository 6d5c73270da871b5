#pragma once
// The #DB and #BP that selftest=debugreg provokes inside its probes (arch/debugreg_probes.S):
// each is recorded, with DR6 as the guest reads it (get_debugreg) at that moment, and the
// probe resumes. The handler then resets DR6 (the status bits are sticky, as the CPU's) and
// resumes with RF set (an instruction breakpoint would fault again) and TF clear (a single
// step traps once).
#include <stdint.h>
#include "arch/trap_frame.h"

namespace kernel::debug_traps {
struct Trap {
  uint64_t vector, rip, dr6;
};
constexpr unsigned kCapacity = 8;

// Forgets what was recorded.
void clear();
unsigned count();
const Trap& at(unsigned index);

// From the trap handler: true (and recorded) for a #DB or #BP raised in the probes.
bool record(TrapFrame& frame);
}  // namespace kernel::debug_traps
