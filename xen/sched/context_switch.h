// Moves a physical CPU from one vCPU to another: everything a vCPU owns on the CPU
// (registers from the trap frame, page-table base, FS/GS bases, x87/SSE state, CR0.TS, the
// debug registers when they enable a breakpoint) is
// saved into its Vcpu and the next one's loaded. The virtual IOPL and the timers live in
// the Vcpu already and need nothing here.
#pragma once
#include "arch/x86/cpu/trap_frame.h"

struct Domain;
struct Vcpu;

namespace context_switch {
// `frame` is the guest frame on top of the hypervisor stack, the one the return path restores.
void save(Vcpu& previous, const TrapFrame& frame);
// Makes `next` current: its registers go into `frame`, the rest onto the CPU. Nothing of a
// vCPU stays behind on a CPU it left (eager FPU, bases and registers saved), so the next CPU
// may be any: migration is a save on one CPU and a load on another.
void load(Vcpu& next, TrapFrame& frame);
// sched_smp=1: the idle CPU loads the hypervisor's own tables, leaving the dirty CPUs of the
// domain whose tables it held (Domain::dirty_cpu_bits). `boot_cr3` is recorded by init.
void load_idle();
void init();  // at boot on CPU 0, before any guest: the hypervisor's tables are CR3's
// Which domain's tables CPU `cpu` holds (sched_smp=1; null: the hypervisor's).
const Domain* tables_on(unsigned cpu);
}  // namespace context_switch
