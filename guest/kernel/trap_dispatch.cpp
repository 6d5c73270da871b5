// The C++ side of every trap (guest/kernel/trap_dispatch.h): sends each exception, event
// upcall, system call and software interrupt to the part of the kernel that handles it. It
// sits at the top, beside main.cpp, because it knows every one of them (the fuzzer and the
// probes first, then events, system calls and processes).
#include "kernel/trap_dispatch.h"

#include "arch/hostile_probes.h"
#include "arch/probe.h"
#include "fuzz/fuzz.h"
#include "kernel/console/console.h"
#include "kernel/console/panic.h"
#include "kernel/events/events.h"
#include "kernel/measurement/trace_capture.h"
#include "kernel/process/process.h"
#include "kernel/process/software_interrupts.h"
#include "kernel/process/syscalls.h"
#include "pv-kernel-patches/pv_ops.h"
#include "pv-kernel-patches/shared_info.h"
#include "pv-kernel-patches/traps.h"
#include "selftest/cpu/debug_traps.h"

namespace {

[[noreturn]] void kernel_fault(const kernel::TrapFrame& frame) {
  uint64_t cr2 = frame.vector == 14 ? kernel::vcpu()->arch.cr2 : 0;
  kernel::panic("%s in kernel: rip=%lx rsp=%lx error=%lx cr2=%lx", pv::exception_name(frame.vector), frame.rip,
                frame.rsp, frame.error_code, cr2);
}

void dispatch(kernel::TrapFrame& frame) {
  if (kernel::fuzz_fixup(frame)) return;  // a trap inside one of the fuzzer's probes
  switch (frame.vector) {
    case kernel::TrapFrame::kEventVector: kernel::events_handle_upcall(); return;
    case kernel::TrapFrame::kSyscallVector: kernel::syscall_dispatch(frame); return;
    case kernel::TrapFrame::kFailsafeVector:
      kernel::print("kernel: failsafe callback (bad segment on return) rip=%lx\n", frame.rip);
      return;
    case kernel::TrapFrame::kSysenterVector: kernel::sysenter_arrived(frame); return;
    default: break;
  }
  if (frame.vector >= 32 && frame.vector < 256) {  // a software interrupt the trap table let through
    kernel::software_interrupt_arrived(frame);
    return;
  }
  if (!frame.from_user()) {
    if (kernel::probe_fixup(frame) || kernel::hostile_probe_fixup(frame) || kernel::debug_traps::record(frame)) return;
    kernel_fault(frame);
  }
  if (frame.vector == 14) {
    // 64-bit PV: the faulting address is in vcpu_info, not in a readable CR2.
    kernel::user_page_fault(frame, kernel::vcpu()->arch.cr2);
    return;
  }
  kernel::user_exception(frame, pv::exception_name(frame.vector));
}

}  // namespace

extern "C" void trap_dispatch(kernel::TrapFrame* frame) {
  dispatch(*frame);
  kernel::trace_capture::poll();  // demand faults produce records too: drain before the buffer fills
  // Whatever runs next (user mode or interrupted kernel code) must see every queued
  // page-table update: batched mode ends at every exit from the kernel.
  pv::ops.flush();
}
