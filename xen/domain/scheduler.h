// One vCPU runs at a time on the boot CPU. When it blocks, the CPU idles until an event
// (the timer) makes it runnable; when no domain is left, the machine ends.
#pragma once
#include "arch/x86/cpu/trap_frame.h"

namespace scheduler {
void run_until_runnable(TrapFrame& frame);
void block();   // SCHEDOP_block: enable events, sleep unless one is pending
void yield();
}  // namespace scheduler
