#include "pv/guest_entry.h"
#include "abi/xen_abi.h"
#include <xen/xen.h>
#include "arch/x86/cpu/cpu_tables.h"
#include "pv/traps.h"
#include "arch/x86/cpu/registers.h"
#include "arch/x86/cpu/rflags.h"
#include "console/console.h"
#include "domain/domain.h"
#include "sched/scheduler.h"
#include "hypercall/guest_call.h"
#include "pv/bounce.h"
#include "pv/debug_exception.h"
#include "pv/invalid_op.h"
#include "pv/page_fault.h"
#include "pv/privileged_op.h"
#include "pv/return_to_guest.h"
#include "sched/hypervisor_lock.h"
#include "arch/x86/cpu/per_cpu.h"
#include "pv/software_interrupt.h"
#include "pv/rules/unemulated_report.h"
#include "pv/instruction_fetch.h"
#include "domain/shared_info.h"
#include "perf/perf_counters.h"
#include "trace/format/events.h"
#include "tracing/trace_buffers.h"

extern "C" char return_from_trap[];

namespace pv {
namespace {
constexpr uint32_t error_code_vectors = (1u << 8) | (1u << 10) | (1u << 11) | (1u << 12) | (1u << 13) | (1u << 14) |
                                        (1u << 17) | (1u << 21) | (1u << 29) | (1u << 30);
constexpr uint32_t pfec_user = 1u << 2;
constexpr unsigned vector_invalid_opcode = 6;
constexpr unsigned vector_general_protection = 13;

bool trap_masks_events(const trap_info_t& trap) { return trap.flags & 4; }  // TI_GET_IF

// Xen's switch_to_kernel: a syscall from compatibility mode (FLAT_RING3_CS32, through CSTAR)
// goes to the syscall32 callback, any other to the syscall callback; with none, #UD.
bool from_compat_mode(const TrapFrame& frame) { return (frame.cs & 0xffff) == FLAT_RING3_CS32; }

// Out of line: a hypercall passing through handle_syscall then needs no frame of its own.
[[gnu::noinline]] void bounce_system_call(Vcpu& vcpu, TrapFrame& frame) {
  perf::add(perf::Counter::guest_syscalls);
  const bool compat = from_compat_mode(frame);
  uint64_t callback = compat ? vcpu.syscall32_callback : vcpu.syscall_callback;
  Bounce bounce{callback, false, 0, compat ? vcpu.syscall32_disables_events : vcpu.syscall_disables_events};
  bool clear_df = true;
  if (!bounce.handler) {  // no callback registered: the guest sees #UD at the syscall
    const trap_info_t& ud = vcpu.trap_table[vector_invalid_opcode];
    frame.rip -= 2;
    bounce = Bounce{ud.address, false, 0, trap_masks_events(ud)};
    clear_df = false;
  }
  if (!create_bounce_frame(vcpu, frame, bounce)) {
    domains::crash(*vcpu.domain, "no usable system-call callback");
    return;
  }
  if (clear_df) frame.rflags &= ~rflags::direction;
}
}  // namespace

// The guest's syscall from 64-bit code (LSTAR, arch/x86/entry.S calls this directly): from its
// kernel a hypercall, from its user mode a system call bounced to the kernel.
// With sched_smp=1 both hold the hypervisor lock throughout (sched/hypervisor_lock), in copies
// of their own: with sched_smp=0 a flag test is all the lock costs a hypercall.
namespace {
[[gnu::always_inline]] inline void handle_syscall(TrapFrame& frame) {
  Vcpu& vcpu = *domains::current();
  if (vcpu.kernel_mode) [[likely]]
    hypercall::dispatch(vcpu, frame);
  else
    bounce_system_call(vcpu, frame);
  before_return_to_guest(frame);
}

[[gnu::noinline]] void guest_syscall_with_lock(TrapFrame* frame) {
  hypervisor_lock::detail::acquire_slow();
  handle_syscall(*frame);
  hypervisor_lock::detail::release_all_slow();
}
}  // namespace

extern "C" void guest_syscall(TrapFrame* frame) {
  if (domains::vcpus_on_every_cpu()) [[unlikely]]
    return guest_syscall_with_lock(frame);
  handle_syscall(*frame);
}

// From compatibility mode (CSTAR): a 32-bit user process. Only a 64-bit guest kernel makes
// hypercalls, so this is bounced even from kernel mode, as Xen's cstar_enter does.
extern "C" void guest_syscall_compat(TrapFrame* frame) {
  hypervisor_lock::acquire();
  bounce_system_call(*domains::current(), *frame);
  before_return_to_guest(*frame);
  hypervisor_lock::release_all();
}

namespace {
// As Xen: a page fault is traced when it goes to the guest. Out of line, reading what it
// records from memory, so the bounce path keeps no registers for it.
[[gnu::noinline, gnu::cold]] void trace_bounced_page_fault(const Vcpu& vcpu, const TrapFrame& frame,
                                                           uint32_t error_code) {
  uint64_t address = vcpu.info()->arch.cr2;
  trace::record_words(trace::events::kPvPageFault, trace::low(frame.rip), trace::high(frame.rip), trace::low(address),
                      trace::high(address), error_code);
}
}  // namespace

namespace {
// Both entry points in one body; `traced` only decides whether a bounced page fault is recorded.
template <bool traced>
[[gnu::always_inline]] inline void inject(Vcpu& vcpu, TrapFrame& frame, unsigned vector, uint32_t error_code) {
  const trap_info_t& trap = vcpu.trap_table[vector];
  bool has_error_code = error_code_vectors & (1u << vector);
  if (vector == 14) {
    error_code &= ~pfec_user;
    if (!vcpu.kernel_mode) error_code |= pfec_user;
    if constexpr (traced) trace_bounced_page_fault(vcpu, frame, error_code);
  }
  Bounce bounce{trap.address, has_error_code, error_code, trap_masks_events(trap)};
  perf::add(perf::Counter::bounced_exceptions);
  if (!bounce.handler) {
    printk("d%uv%u unhandled exception %u (error %x) at %lx, cr2 %lx\n", vcpu.domain->id, vcpu.id, vector, error_code,
           frame.rip, vector == 14 ? vcpu.info()->arch.cr2 : 0);
    domains::crash(*vcpu.domain, "exception with no handler");
    return;
  }
  if (!create_bounce_frame(vcpu, frame, bounce))
    domains::crash(*vcpu.domain, "cannot write exception frame on the guest kernel stack");
}

[[gnu::noinline]] void inject_exception_traced(Vcpu& vcpu, TrapFrame& frame, unsigned vector, uint32_t error_code) {
  inject<true>(vcpu, frame, vector, error_code);
}
[[gnu::noinline]] void inject_exception_untraced(Vcpu& vcpu, TrapFrame& frame, unsigned vector, uint32_t error_code) {
  inject<false>(vcpu, frame, vector, error_code);
}
}  // namespace

// The trace point comes first and diverts to the traced copy with the same arguments (a tail
// jump): the untraced path then keeps no register alive for a record, and costs the NOP alone.
void inject_exception(Vcpu& vcpu, TrapFrame& frame, unsigned vector, uint32_t error_code) {
  if (trace_points::on()) [[unlikely]]
    return inject_exception_traced(vcpu, frame, vector, error_code);
  return inject_exception_untraced(vcpu, frame, vector, error_code);
}

namespace {
// A #GP (error code 0: the instruction's own) or #UD that nothing emulated: its RIP and bytes
// on the console before the guest gets it, or is crashed for having no handler.
[[gnu::noinline, gnu::cold]] void report_unemulated(Vcpu& vcpu, const TrapFrame& frame, unsigned vector) {
  const char* name = unemulated_report::vector_name(vector);
  if (!name || (vector == vector_general_protection && frame.error_code != 0)) return;
  Domain& domain = *vcpu.domain;
  const bool fatal = vcpu.trap_table[vector].address == 0;
  if (!unemulated_report::should_log(domain.unemulated_reported, fatal)) return;
  ++domain.unemulated_reported;
  instruction_fetch::FetchedInstruction fetched;
  if (!instruction_fetch::fetch(vcpu, frame.rip, fetched)) fetched.count = 0;
  char bytes[3 * sizeof(fetched.bytes) + 1];
  unemulated_report::format_bytes(fetched.bytes, fetched.count, bytes, sizeof(bytes));
  printk("d%uv%u %s not emulated at %lx (%s mode), bytes %s: %s\n", domain.id, vcpu.id, name, frame.rip,
         vcpu.kernel_mode ? "kernel" : "user", bytes, fatal ? "no handler, crashing the domain" : "to the guest");
}
}  // namespace

void handle_guest_exception(Vcpu& vcpu, TrapFrame& frame) {
  unsigned vector = unsigned(frame.vector);
  if (vector == vector_general_protection &&
      (privileged_op::emulate(vcpu, frame) || software_interrupt::deliver(vcpu, frame)))
    return;
  if (vector == vector_invalid_opcode && invalid_op::emulate(vcpu, frame)) return;
  if (vector == vectors::debug) debug_exception::record_from_guest(vcpu);
  if (vector == vector_general_protection || vector == vector_invalid_opcode) report_unemulated(vcpu, frame, vector);
  if (vector == 14) {
    perf::add(perf::Counter::pv_page_faults);
    uint64_t address = cpu::read_cr2();
    if (page_fault::fixup(vcpu, frame, address)) return;
    vcpu.info()->arch.cr2 = address;
  }
  inject_exception(vcpu, frame, vector, uint32_t(frame.error_code));
}

namespace detail {
// A failed upcall crashes the domain; the scheduler then moves on to another vCPU, which may
// have events of its own.
void schedule_and_deliver_events(TrapFrame& frame) {
  for (;;) {
    scheduler::schedule(frame);
    Vcpu* vcpu = domains::current();
    if (!takes_upcall(*vcpu)) return;
    shared_info_page::update_time(*vcpu);
    perf::add(perf::Counter::events_delivered);
    Bounce bounce{vcpu->event_callback, false, 0, true};
    if (create_bounce_frame(*vcpu, frame, bounce)) return;
    domains::crash(*vcpu->domain, "cannot deliver an event upcall");
  }
}
}  // namespace detail

// The return path's iretq faulted on the frame a guest chose (HYPERVISOR_iret copies its
// selectors and rip as Xen's do_iret does: a null or DPL-0 code selector, a null stack
// selector, a non-canonical rip). As Xen's pre-exception fixup, the fault becomes the
// guest's own, raised where it would have resumed: its registers are the guest's (the
// return path had restored them) and its rip..ss are the five words the iretq was given.
// It is delivered through the guest's trap table; a guest that cannot take it is crashed.
void exit_fault(const TrapFrame& fault) {
  const uint64_t* returning = reinterpret_cast<const uint64_t*>(fault.rsp);  // rip, cs, rflags, rsp, ss
  TrapFrame guest = fault;
  guest.rip = returning[0];
  guest.cs = returning[1];
  guest.rflags = returning[2];
  guest.rsp = returning[3];
  guest.ss = returning[4];
  hypervisor_lock::acquire();  // let go before the iretq that faulted; enter_guest lets it go again
  Vcpu* vcpu = domains::current();
  if (!guest.from_guest() || !vcpu) fatal_trap(fault, "returning to the hypervisor");
  log_debug("d%uv%u: fault %lu (error %lx) returning to %04lx:%lx\n", vcpu->domain->id, vcpu->id, fault.vector,
            fault.error_code, guest.cs, guest.rip);
  inject_exception(*vcpu, guest, unsigned(fault.vector), uint32_t(fault.error_code));
  before_return_to_guest(guest);
  enter_guest(guest);
}

void enter_guest(const TrapFrame& frame) {
  auto* top = reinterpret_cast<TrapFrame*>(cpu_tables::entry_stack_top(per_cpu::this_cpu())) - 1;
  *top = frame;
  hypervisor_lock::release_all();
  asm volatile("mov %0, %%rsp\n jmp *%1" ::"r"(top), "r"(return_from_trap) : "memory");
  __builtin_unreachable();
}
}  // namespace pv
