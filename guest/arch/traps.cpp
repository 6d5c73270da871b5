#include "arch/traps.h"

#include "arch/xen.h"
#include "kernel/console.h"
#include "kernel/events.h"
#include "kernel/fuzz.h"
#include "kernel/panic.h"
#include "kernel/probe.h"
#include "kernel/hostile_probes.h"
#include "kernel/trace_capture.h"
#include "kernel/process.h"
#include "kernel/shared_info.h"
#include "kernel/software_interrupts.h"
#include "kernel/syscalls.h"
#include "pv-kernel-patches/pv_ops.h"

extern "C" {
void trap_divide_error();
void trap_debug();
void trap_int3();
void trap_overflow();
void trap_bounds();
void trap_invalid_op();
void trap_device_not_available();
void trap_coprocessor_segment();
void trap_invalid_tss();
void trap_segment_not_present();
void trap_stack_segment();
void trap_general_protection();
void trap_page_fault();
void trap_coprocessor_error();
void trap_alignment_check();
void trap_machine_check();
void trap_simd_error();
}

namespace arch {
namespace {

// trap_info flags: bits 0-1 the privilege level allowed to raise it with int n, bit 2 set
// means "interrupt gate": event delivery is masked on entry. Masking matters for #PF: an
// event upcall before the handler reads vcpu_info.arch.cr2 could fault and overwrite it.
constexpr uint8_t kMaskEvents = 4;
constexpr uint8_t kUserMayRaise = 3;

trap_info_t entry(uint8_t vector, void (*handler)(), uint8_t flags = kMaskEvents) {
  return trap_info_t{vector, flags, FLAT_KERNEL_CS, reinterpret_cast<unsigned long>(handler)};
}

}  // namespace

const char* exception_name(uint64_t vector) {
  static const char* const kNames[] = {"divide error",
                                       "debug",
                                       "NMI",
                                       "breakpoint",
                                       "overflow",
                                       "bound range",
                                       "invalid opcode",
                                       "device not available",
                                       "double fault",
                                       "coprocessor segment",
                                       "invalid TSS",
                                       "segment not present",
                                       "stack fault",
                                       "general protection",
                                       "page fault",
                                       "reserved",
                                       "x87 error",
                                       "alignment check",
                                       "machine check",
                                       "SIMD error"};
  return vector < sizeof(kNames) / sizeof(kNames[0]) ? kNames[vector] : "unknown";
}

void traps_install() {
  // Vector 2 (NMI) uses the NMI callback, 8 (double fault) is handled by the hypervisor.
  static const trap_info_t table[] = {
      entry(0, trap_divide_error),
      entry(1, trap_debug),
      entry(3, trap_int3, kMaskEvents | kUserMayRaise),
      entry(4, trap_overflow, kMaskEvents | kUserMayRaise),
      entry(5, trap_bounds),
      entry(6, trap_invalid_op),
      entry(7, trap_device_not_available),
      entry(9, trap_coprocessor_segment),
      entry(10, trap_invalid_tss),
      entry(11, trap_segment_not_present),
      entry(12, trap_stack_segment),
      entry(13, trap_general_protection),
      entry(14, trap_page_fault),
      entry(16, trap_coprocessor_error),
      entry(17, trap_alignment_check),
      entry(18, trap_machine_check),
      entry(19, trap_simd_error),
      trap_info_t{0, 0, 0, 0},  // terminator: address 0
  };
  long rc = xen::set_trap_table(table);
  if (rc < 0) kernel::panic("set_trap_table: %ld", rc);
}

void traps_remove_all() { xen::set_trap_table(nullptr); }

}  // namespace arch

namespace {

[[noreturn]] void kernel_fault(const kernel::TrapFrame& frame) {
  uint64_t cr2 = frame.vector == 14 ? kernel::vcpu()->arch.cr2 : 0;
  kernel::panic("%s in kernel: rip=%lx rsp=%lx error=%lx cr2=%lx", arch::exception_name(frame.vector), frame.rip,
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
    if (kernel::probe_fixup(frame) || kernel::hostile_probe_fixup(frame)) return;
    kernel_fault(frame);
  }
  if (frame.vector == 14) {
    // 64-bit PV: the faulting address is in vcpu_info, not in a readable CR2.
    kernel::user_page_fault(frame, kernel::vcpu()->arch.cr2);
    return;
  }
  kernel::user_exception(frame, arch::exception_name(frame.vector));
}

}  // namespace

extern "C" void trap_dispatch(kernel::TrapFrame* frame) {
  dispatch(*frame);
  kernel::trace_capture::poll();  // demand faults produce records too: drain before the buffer fills
  // Whatever runs next (user mode or interrupted kernel code) must see every queued
  // page-table update: batched mode ends at every exit from the kernel.
  pv::ops.flush();
}
