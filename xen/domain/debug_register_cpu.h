// The debug registers of the running vCPU on the CPU, as Xen 4.17 keeps them for a PV guest:
// loaded only while its DR7 enables a breakpoint (paravirt_ctxt_switch_to's
// activate_debugregs), reloaded when the guest changes them (set_debugreg, mov to DRn), and
// disabled (DR7 0) when the CPU moves to another vCPU or to idle (paravirt_ctxt_switch_from):
// a guest's breakpoints never fire in another guest or in the idle loop. DR7 as loaded
// enables them in every ring, so a data breakpoint also fires when the hypervisor touches the
// watched guest memory on the guest's behalf (pv/debug_exception).
#pragma once
#include "pv/rules/debug_registers.h"

namespace debug_register_cpu {
// The CPU's reset state at boot (Xen's cpu_init): nothing enabled.
void init();
// `state` becomes the CPU's: all of it if it enables a breakpoint, else DR7 only (disabled).
void load(const debug_registers::State& state);
// The running vCPU leaves the CPU: its breakpoints are disabled if they were loaded.
void unload();
// DR7 as the CPU holds it now (what a #DB in hypervisor context checks against).
uint64_t loaded_dr7();
// After a #DB in hypervisor context that would repeat: every breakpoint disabled.
void disable();
// For selftest=syscall-entry-debug (tests only): a write breakpoint on a hypervisor word, in
// DR0, outside the guest's bookkeeping (a guest that arms its own replaces it).
void watch_hypervisor_word(uint64_t address);
}  // namespace debug_register_cpu
