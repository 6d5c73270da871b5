#include "pv/debug_exception.h"
#include "arch/x86/cpu/registers.h"
#include "arch/x86/cpu/rflags.h"
#include "console/console.h"
#include "console/output_limit.h"
#include "domain/domain.h"
#include "domain/debug_register_cpu.h"
#include "time/clock.h"

namespace debug_exception {
namespace {
// A guest can raise these as often as it likes: Xen's printk_ratelimit numbers.
console::OutputLimit report_limit{console::guest_message_burst, console::guest_message_ns_apart};
bool unlimited = false;

uint64_t take_status() {
  const uint64_t reported = cpu::read_dr<6>();
  cpu::write_dr<6>(debug_registers::kDr6Default);
  return reported;
}
}  // namespace

void record_from_guest(Vcpu& vcpu) { debug_registers::record_status(vcpu.debug, take_status()); }

void in_hypervisor(TrapFrame& frame) {
  const uint64_t reported = take_status();
  // The syscall mask and every gate clear TF on the way in: a set TF is the hypervisor's own
  // mistake, which would trap again after every instruction.
  if (frame.rflags & rflags::trap) {
    printk("#DB in hypervisor context with TF set at %lx: TF cleared\n", frame.rip);
    frame.rflags &= ~rflags::trap;
  }
  if (debug_registers::instruction_breakpoint_hit(reported, debug_register_cpu::loaded_dr7())) {
    printk("instruction breakpoint hit in hypervisor context at %lx: breakpoints disabled\n", frame.rip);
    debug_register_cpu::disable();
  }
  if (!unlimited && !report_limit.take(system_clock::now_ns(), 1)) return;
  const Vcpu* vcpu = domains::current();
  printk("d%dv%u: #DB in hypervisor context at %04lx:%lx, stack %04lx:%lx, dr6 %lx: ignored\n",
         vcpu ? int(vcpu->domain->id) : -1, vcpu ? vcpu->id : 0, frame.cs, frame.rip, frame.ss, frame.rsp, reported);
}

void report_every_one() { unlimited = true; }
}  // namespace debug_exception
