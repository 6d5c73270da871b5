// FPU/SSE: guests (and musl-built user programs) use SSE, so the CPU must have
// CR4.OSFXSR/OSXMMEXCPT set and CR0.EM clear. Each vCPU keeps its x87/SSE state in an fxsave
// area (Westmere has no XSAVE), switched eagerly on every context switch.
#pragma once
#include <stdint.h>

namespace fpu {
void init();
void initial_state(uint8_t* area);  // what fninit and a reset MXCSR leave (fxsave format)
void save(uint8_t* area);           // 512 bytes, 16-byte aligned; clears CR0.TS first
void restore(const uint8_t* area);  // leaves CR0.TS clear
void set_task_switched(bool on);    // CR0.TS: the guest's fpu_taskswitch
}  // namespace fpu
