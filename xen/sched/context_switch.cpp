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

namespace context_switch {
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
  guest_mode::load(next);         // CR3 and the GS base of the mode it is in
  shared_info_page::update_time(next);
  runstate_area::update(next);
  timers::switched_in(next);  // its periodic timer runs again
}
}  // namespace context_switch
