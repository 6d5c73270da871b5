#include "pv/traps.h"
#include "arch/x86/platform/local_apic.h"
#include "arch/x86/cpu/per_cpu.h"
#include "arch/x86/cpu/registers.h"
#include "arch/x86/platform/cross_cpu.h"
#include "arch/x86/platform/smp_boot.h"
#include "console/console.h"
#include "domain/guest_access.h"
#include "pv/debug_exception.h"
#include "pv/guest_entry.h"
#include "pv/return_to_guest.h"
#include "sched/hypervisor_lock.h"
#include "sched/scheduler.h"

namespace {
const char* exception_name(uint64_t vector) {
  static const char* const names[32] = {"divide error",
                                        "debug",
                                        "NMI",
                                        "breakpoint",
                                        "overflow",
                                        "bound range",
                                        "invalid opcode",
                                        "device not available",
                                        "double fault",
                                        "coprocessor overrun",
                                        "invalid TSS",
                                        "segment not present",
                                        "stack fault",
                                        "general protection",
                                        "page fault",
                                        "reserved",
                                        "x87 error",
                                        "alignment check",
                                        "machine check",
                                        "SIMD error",
                                        "virtualization",
                                        "control protection"};
  if (vector < 32 && names[vector]) return names[vector];
  return "interrupt";
}

extern "C" char __image_start[], __text_end[];

bool plausible_kernel_address(uint64_t address) { return address >= 0xffff800000000000ULL; }
bool is_text_address(uint64_t address) { return address >= uint64_t(__image_start) && address < uint64_t(__text_end); }
}  // namespace

void print_registers(const TrapFrame& f) {
  printk("RIP: %04lx:%016lx RFLAGS: %016lx vector %lu error %lx\n", f.cs, f.rip, f.rflags, f.vector, f.error_code);
  printk("rax: %016lx rbx: %016lx rcx: %016lx\n", f.rax, f.rbx, f.rcx);
  printk("rdx: %016lx rsi: %016lx rdi: %016lx\n", f.rdx, f.rsi, f.rdi);
  printk("rbp: %016lx rsp: %016lx r8:  %016lx\n", f.rbp, f.rsp, f.r8);
  printk("r9:  %016lx r10: %016lx r11: %016lx\n", f.r9, f.r10, f.r11);
  printk("r12: %016lx r13: %016lx r14: %016lx\n", f.r12, f.r13, f.r14);
  printk("r15: %016lx cr2: %016lx cr3: %016lx ss: %04lx\n", f.r15, cpu::read_cr2(), cpu::read_cr3(), f.ss);
}

// Walks the frame-pointer chain (everything is built with -fno-omit-frame-pointer); the
// addresses resolve with `addr2line -e build/xen/xen`.
void print_backtrace(uint64_t rbp) {
  printk("Backtrace:\n");
  for (int depth = 0; depth < 16 && plausible_kernel_address(rbp) && (rbp & 7) == 0; ++depth) {
    auto* frame = reinterpret_cast<const uint64_t*>(rbp);
    uint64_t return_address = frame[1];
    if (!is_text_address(return_address)) break;
    printk("  [<%016lx>]\n", return_address);
    rbp = frame[0];
  }
}

void fatal_trap(const TrapFrame& frame, const char* why) {
  console::begin_panic();
  printk("*** hypervisor fault: %s (%s) ***\n", exception_name(frame.vector), why);
  printk("CPU: %u\n", per_cpu::this_cpu());
  print_registers(frame);
  printk("  [<%016lx>] (faulting instruction)\n", frame.rip);
  // A leaf function keeps no frame pointer: its return address is the word at rsp.
  // Not after a double fault: its rsp may be the guard page that caused it.
  if (frame.vector != vectors::double_fault) {
    uint64_t top_of_stack = *reinterpret_cast<const uint64_t*>(frame.rsp);
    if (is_text_address(top_of_stack)) printk("  [<%016lx>] ? (return address at rsp)\n", top_of_stack);
  }
  print_backtrace(frame.rbp);
  console::panic("fatal trap in the hypervisor: halting");
}

extern "C" char exit_iretq[];

namespace {
// An NMI says nothing a guest could act on (no watchdog, no external NMI source): it is
// reported and the interrupted context resumes. It runs on its own stack and never
// reschedules, so it cannot disturb whatever it interrupted.
void report_nmi(const TrapFrame& frame) {
  printk("NMI received at %lx (%s context), ignored\n", frame.rip, frame.from_guest() ? "guest" : "hypervisor");
}

// A fault in hypervisor context that a guest caused: on the return path's iretq (the guest's
// frame), or in one of the marked guest-memory accesses. Anything else is a hypervisor bug.
[[gnu::cold]] void hypervisor_fault(TrapFrame& frame) {
  if (frame.rip == uint64_t(exit_iretq)) pv::exit_fault(frame);
  if (guest_access::fixup(frame)) return;
  fatal_trap(frame, "in hypervisor context");
}

// The vectors no guest may handle, whoever was running when they came (out of line: every
// trap would otherwise pay for their checks). An NMI resumes what it interrupted; the others
// end the machine: the hardware failed, or a hypervisor stack overflowed into its guard page
// (a double fault is the only way such an overflow is reported).
[[gnu::cold, gnu::noinline]] void machine_exception(TrapFrame& frame) {
  if (frame.vector == vectors::nmi) {
    if (console::another_cpu_panics()) smp_boot::halt_this_cpu();  // its stop, for a CPU with interrupts off
    return report_nmi(frame);
  }
  if (frame.vector == vectors::machine_check) fatal_trap(frame, "machine check");
  fatal_trap(frame, "a hypervisor stack overflowed into its guard page?");
}
constexpr uint32_t machine_exception_vectors =
    (1u << vectors::nmi) | (1u << vectors::double_fault) | (1u << vectors::machine_check);
}  // namespace

namespace {
// With sched_smp=1 the hypervisor lock (sched/hypervisor_lock) is taken for everything but the
// cross-CPU call and event-check handlers (whose senders may hold it), and let go on the way
// back to the guest. Two copies: with sched_smp=0 the one without any of it (a flag test at the
// entry is all it costs a trap).
template <bool smp>
[[gnu::always_inline]] inline void dispatch(TrapFrame* frame) {
  if (frame->vector == vectors::lapic_timer) {
    if constexpr (smp) hypervisor_lock::detail::acquire_slow();
    local_apic::handle_timer_interrupt();
    if constexpr (smp) {
      if (!frame->from_guest()) {  // the idle loop's halt, or its scrubbing (holding the lock)
        hypervisor_lock::detail::release_slow();
        return;
      }
    }
  } else if (frame->vector == vectors::spurious) {
    return;
  } else if (frame->vector >= vectors::first_external) {
    if (frame->vector == vectors::halt_cpu) [[unlikely]]
      smp_boot::halt_this_cpu();
    if (frame->vector == vectors::call_function) cross_cpu::handle_call_interrupt();
    local_apic::end_of_interrupt();  // all an event check does
    if constexpr (smp) {
      if (frame->vector == vectors::event_check && frame->from_guest()) {
        hypervisor_lock::detail::acquire_slow();
        scheduler::event_check_arrived();
      }
    }
  } else if (machine_exception_vectors & (1u << frame->vector)) [[unlikely]] {
    machine_exception(*frame);
    return;  // an NMI never reschedules: it may have interrupted anything
  } else if (frame->vector == vectors::debug && !frame->from_guest()) [[unlikely]] {
    debug_exception::in_hypervisor(*frame);
    return;  // on the #DB stack, in the middle of whatever it interrupted
  } else if (frame->from_guest()) {
    if constexpr (smp) hypervisor_lock::detail::acquire_slow();
    Vcpu& vcpu = *domains::current();  // once for both: current() is not free on SMP
    pv::handle_guest_exception(vcpu, *frame);
    pv::before_return_to_guest(vcpu, *frame);
    if constexpr (smp) hypervisor_lock::detail::release_all_slow();
    return;
  } else {
    hypervisor_fault(*frame);
    return;
  }
  if (frame->from_guest()) {
    if constexpr (smp) hypervisor_lock::detail::acquire_slow();  // nests if taken above
    pv::before_return_to_guest(*frame);
    if constexpr (smp) hypervisor_lock::detail::release_all_slow();
  }
}

[[gnu::noinline]] void dispatch_with_lock(TrapFrame* frame) { dispatch<true>(frame); }
}  // namespace

extern "C" void trap_dispatch(TrapFrame* frame) {
  if (domains::vcpus_on_every_cpu()) [[unlikely]]
    return dispatch_with_lock(frame);
  dispatch<false>(frame);
}
