// Moves the one physical CPU from one vCPU to another: everything a vCPU owns on the CPU
// (registers from the trap frame, page-table base, FS/GS bases, x87/SSE state, CR0.TS, the
// debug registers when they enable a breakpoint) is
// saved into its Vcpu and the next one's loaded. The virtual IOPL and the timers live in
// the Vcpu already and need nothing here.
#pragma once
#include "arch/x86/cpu/trap_frame.h"

struct Vcpu;

namespace context_switch {
// `frame` is the guest frame on top of the hypervisor stack, the one the return path restores.
void save(Vcpu& previous, const TrapFrame& frame);
// Makes `next` current: its registers go into `frame`, the rest onto the CPU.
void load(Vcpu& next, TrapFrame& frame);
}  // namespace context_switch
