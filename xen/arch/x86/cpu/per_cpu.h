// Which CPU this is, from the stack alone (docs/architecture.md, "Per-CPU data"). Every stack a
// CPU runs on once it is up (its entry stack, its IST stacks) lies in its own window at
// STACKS_VIRT_START + cpu * PER_CPU_WINDOW_BYTES, so the window rsp is in names the CPU: no
// memory load, no GS (a PV guest owns GS_BASE), valid in an IST handler too. The boot CPU's
// boot stack and its stacks before stacks::guard lie outside every window: that is CPU 0.
#pragma once
#include <stdint.h>
#include "arch/x86/layout.h"

namespace per_cpu {
inline unsigned cpu_of_stack(uint64_t rsp) {
  uint64_t window = (rsp - STACKS_VIRT_START) / PER_CPU_WINDOW_BYTES;  // wraps below: huge
  return window < MAX_CPUS ? unsigned(window) : 0;
}
inline unsigned this_cpu() {
  uint64_t rsp;
  asm volatile("mov %%rsp, %0" : "=r"(rsp));
  return cpu_of_stack(rsp);
}
}  // namespace per_cpu
