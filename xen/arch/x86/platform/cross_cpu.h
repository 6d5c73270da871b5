// Cross-CPU calls (Xen's on_selected_cpus), the event-check IPI, and TLB flushes across CPUs
// with the flush clock (docs/architecture.md, "Locks, IPIs and the flush clock"). Nothing on
// a guest path uses these yet: the boot self-test (selftest=ipi) does.
#pragma once
#include <stdint.h>
#include "arch/x86/cpu/cpu_mask.h"
#include "arch/x86/layout.h"

namespace cross_cpu {
using Function = void (*)(void* argument);

// Runs function(argument) on every CPU of `mask` that is online (the others, and numbers
// beyond MAX_CPUS, are ignored): on the other CPUs in their call_function interrupt handler,
// on this CPU (if in the mask) directly with interrupts disabled. One call at a time for the
// machine: the call lock (level cross_cpu_call), so the caller may hold only locks of lower
// levels, and `function` may take only locks of higher levels. wait: return once every
// target has finished; otherwise once every target has started (`argument` must then stay
// valid until the last of them has run). A target that has not started within 1 s (a CPU
// that never enables interrupts) is a panic naming it; how long it then runs is the
// function's own business. While the caller waits for the call lock it runs a call addressed
// to itself, so two CPUs calling each other with interrupts off do not deadlock. Not from an
// interrupt handler.
void on_cpus(CpuMask mask, Function function, void* argument, bool wait);

// The call_function IPI's handler (pv/traps dispatches the vector).
void handle_call_interrupt();
// Runs the pending call if it is addressed to this CPU (and does nothing else): for a CPU that
// waits with interrupts off for something another CPU holds, which may be waiting in on_cpus
// for this CPU to answer (the PV MMU's frame-lock and validation waits, mm/mm_locks.h).
void poll();

// The event-check IPI to every online CPU of `mask` but this one: a vector whose handler does
// nothing but end the interrupt, so a CPU halted in `sti; hlt` (an idle CPU, later a vCPU's
// halt) wakes and looks again at whatever it waits for. Nothing is waited for.
void send_event_check(CpuMask mask);

// Every online CPU of `mask` flushes its whole TLB (flush_tlb_local), this one directly, the
// others through a waited cross-CPU call; returns when all have. Traced (trace/EVENTS.md): the
// sender's FLUSH_IPI_SEND in its buffer, each remote CPU's FLUSH_IPI_RECEIVE in its own.
void flush_tlb_mask(CpuMask mask);
// This CPU's full flush (a CR3 reload: no PGE, no PCIDs, nothing survives it): the flush clock
// ticks, the TLB is flushed, the CPU's stamp becomes that tick.
void flush_tlb_local();
// The flush clock's current value, and a copy of each CPU's last full flush on it
// (flush_clock::never: none yet), for mm::cpus_needing_flush; how many flushes a CPU made.
uint64_t flush_clock_now();
void copy_flush_stamps(uint64_t (&stamps)[MAX_CPUS]);
uint64_t flush_count(unsigned cpu);
}  // namespace cross_cpu
