// The two modes of a PV vCPU, kernel and user, both in ring 3: each has its own L4
// (Vcpu::bases) and GS base, and the CPU runs on those of the mode the vCPU is in.
#pragma once
#include "arch/x86/cpu/per_cpu.h"
#include "arch/x86/cpu/registers.h"
#include "domain/domain.h"
#include "memory/boot_memory.h"
#include "perf/perf_counters.h"

namespace guest_mode {
// Loads the L4 and GS base of the mode the vCPU is in (a context switch, a new base pointer).
void load(const Vcpu& vcpu);
// Switches the vCPU to its other mode and loads that one.
void toggle(Vcpu& vcpu);

// The same, inline: a bounce from user mode (every system call and exception a guest's user
// code takes) switches to kernel mode on its way, and is not worth a call there.
namespace detail {
[[gnu::always_inline]] inline void load(const Vcpu& vcpu) {
  // A CR3 load keeps nothing (PGE is off): a full flush on the flush clock, ticked before.
  mm::TlbFlushClock& clock = boot_memory::frame_table().flush_clock();
  const uint64_t tick = clock.tick();
  cpu::write_cr3(vcpu.active_table_mfn() << 12);
  clock.flushed(per_cpu::this_cpu(), tick);
  perf::add(perf::Counter::cr3_writes);
  cpu::write_msr(cpu::msr::gs_base, vcpu.active_gs_base());
}
}  // namespace detail
inline void toggle_inline(Vcpu& vcpu) {
  vcpu.kernel_mode = !vcpu.kernel_mode;
  detail::load(vcpu);
}
}  // namespace guest_mode
