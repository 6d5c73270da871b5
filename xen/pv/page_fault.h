// Page faults a guest takes that the hypervisor may resolve itself before bouncing them
// (the emulation and writable-pagetable paths hook in here). Returns true when handled.
#pragma once
#include <stdint.h>
#include "arch/x86/cpu/trap_frame.h"

struct Vcpu;

namespace page_fault {
bool fixup(Vcpu& vcpu, TrapFrame& frame, uint64_t address);
}
