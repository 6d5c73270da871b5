#include "sched/context_switch.h"
#include "arch/x86/cpu/fpu.h"
#include "arch/x86/cpu/registers.h"
#include "domain/domain.h"
#include "domain/runstate_area.h"
#include "domain/shared_info.h"
#include "domain/writable_page_tables_glue.h"
#include "domain/guest_mode.h"
#include "domain/descriptor_tables.h"
#include "domain/debug_register_cpu.h"
#include "sched/timers.h"
#include "arch/x86/cpu/per_cpu.h"
#include "memory/boot_memory.h"

namespace context_switch {
namespace {
uint64_t idle_cr3 = 0;  // set once at boot
// Per CPU, written by that CPU only: whose tables its CR3 holds (sched_smp=1).
const Domain* tables_of[MAX_CPUS] = {};

// The dirty mask: this CPU joins `next` before its tables are loaded, leaves the domain it held
// after (each CPU touches only its own bit, atomically).
void join(const Domain* next) {
  const unsigned cpu = per_cpu::this_cpu();
  if (next) __atomic_fetch_or(&const_cast<Domain*>(next)->dirty_cpu_bits, uint64_t(1) << cpu, __ATOMIC_SEQ_CST);
}
void leave_previous(const Domain* next) {
  const unsigned cpu = per_cpu::this_cpu();
  const Domain* previous = tables_of[cpu];
  tables_of[cpu] = next;
  if (previous && previous != next)
    __atomic_fetch_and(&const_cast<Domain*>(previous)->dirty_cpu_bits, ~(uint64_t(1) << cpu), __ATOMIC_SEQ_CST);
}
}  // namespace

void init() { idle_cr3 = cpu::read_cr3(); }

const Domain* tables_on(unsigned cpu) { return cpu < MAX_CPUS ? tables_of[cpu] : nullptr; }

void load_idle() {
  mm::TlbFlushClock& clock = boot_memory::frame_table().flush_clock();
  const uint64_t tick = clock.tick();
  cpu::write_cr3(idle_cr3);
  clock.flushed(per_cpu::this_cpu(), tick);
  leave_previous(nullptr);
}

void save(Vcpu& previous, const TrapFrame& frame) {
  // A detached table belongs to the address space about to be switched away from: it is
  // validated and rehooked while that space is still loaded (design notes, section 5).
  writable_page_tables::reattach_all(*previous.domain);
  previous.registers = frame;
  // The MSRs, not our copies: they are what the guest actually ran with.
  previous.fs_base = cpu::read_msr(cpu::msr::fs_base);
  (previous.kernel_mode ? previous.gs_base_kernel : previous.gs_base_user) = cpu::read_msr(cpu::msr::gs_base);
  fpu::save(previous.fpu_state);
  debug_register_cpu::unload();  // its breakpoints fire for it alone, not in idle or another vCPU
}

void load(Vcpu& next, TrapFrame& frame) {
  domains::set_current(&next);
  frame = next.registers;
  next.has_run = next.fpu_initialised = true;
  fpu::restore(next.fpu_state);
  fpu::set_task_switched(next.fpu_switched_out);
  debug_register_cpu::load(next.debug);
  cpu::write_msr(cpu::msr::fs_base, next.fs_base);
  descriptor_tables::load(next);  // its GDT descriptors, and no other vCPU's
  const bool smp = domains::vcpus_on_every_cpu();
  if (smp) join(next.domain);
  guest_mode::load(next);  // CR3 and the GS base of the mode it is in
  if (smp) leave_previous(next.domain);
  shared_info_page::update_time(next);
  runstate_area::update(next);
  timers::switched_in(next);  // its periodic timer runs again
}
}  // namespace context_switch
