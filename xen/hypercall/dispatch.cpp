#include "hypercall/dispatch.h"
#include "hypercall/guest_call.h"
#include "abi/xen_abi.h"
#include <xen/errno.h>
#include <xen/xen.h>
#include "arch/x86/platform/local_apic.h"
#include "domain/domain.h"
#include "perf/perf_counters.h"
#include "hypercall/call_counts.h"
#include "domain/guest_memory.h"
#include "trace/format/events.h"
#include "tracing/trace_buffers.h"

namespace hypercall {
namespace {
constexpr unsigned table_size = detail::kTableSize;

constexpr HandlerTable make_table() {
  HandlerTable t;
  t.h[__HYPERVISOR_set_trap_table] = set_trap_table;
  t.h[__HYPERVISOR_mmu_update] = mmu_update;
  t.h[__HYPERVISOR_stack_switch] = stack_switch;
  t.h[__HYPERVISOR_set_callbacks] = set_callbacks;
  t.h[__HYPERVISOR_fpu_taskswitch] = fpu_taskswitch;
  t.h[__HYPERVISOR_set_debugreg] = set_debugreg;
  t.h[__HYPERVISOR_get_debugreg] = get_debugreg;
  t.h[__HYPERVISOR_memory_op] = memory_op;
  t.h[__HYPERVISOR_multicall] = multicall;
  t.h[__HYPERVISOR_update_va_mapping] = update_va_mapping;
  t.h[__HYPERVISOR_update_va_mapping_otherdomain] = update_va_mapping_otherdomain;
  t.h[__HYPERVISOR_set_timer_op] = set_timer_op;
  t.h[__HYPERVISOR_xen_version] = xen_version;
  t.h[__HYPERVISOR_console_io] = console_io;
  t.h[__HYPERVISOR_vm_assist] = vm_assist;
  t.h[__HYPERVISOR_iret] = iret;
  t.h[__HYPERVISOR_vcpu_op] = vcpu_op;
  t.h[__HYPERVISOR_set_segment_base] = set_segment_base;
  t.h[__HYPERVISOR_set_gdt] = set_gdt;
  t.h[__HYPERVISOR_update_descriptor] = update_descriptor;
  t.h[__HYPERVISOR_mmuext_op] = mmuext_op;
  t.h[__HYPERVISOR_sched_op] = sched_op;
  t.h[__HYPERVISOR_callback_op] = callback_op;
  t.h[__HYPERVISOR_event_channel_op] = event_channel_op;
  t.h[__HYPERVISOR_sysctl] = sysctl;
  t.h[__HYPERVISOR_domctl] = domctl;
  t.h[__HYPERVISOR_physdev_op] = physdev_op;
  return t;
}
constexpr auto handlers = make_table();
}  // namespace

namespace {
// Xen's TRC_PV_HYPERCALL_V2 record (its __trace_hypercall): the op, then the arguments Xen records
// for it as 32-bit words, each flagged in the op word: the count of mmu_update, mmuext_op and
// multicall (an mmu_update batch's entries), sched_op's command, vcpu_op's command and vCPU,
// grant_table_op's command and count. A call inside a multicall is Xen's TRC_PV_HYPERCALL_SUBCALL,
// with the same words. Out of line: built only while tracing is on.
[[gnu::noinline, gnu::cold]] void record_hypercall(uint64_t number, const Arguments& args, bool nested) {
  const uint32_t op = uint32_t(number);
  constexpr uint32_t arg0 = TRC_PV_HYPERCALL_V2_ARG_32(0), arg1 = TRC_PV_HYPERCALL_V2_ARG_32(1),
                     arg2 = TRC_PV_HYPERCALL_V2_ARG_32(2);
  const uint32_t event = nested ? trace::events::kPvHypercallSubcall : trace::events::kPvHypercallV2;
  switch (number) {
    case __HYPERVISOR_mmu_update:
    case __HYPERVISOR_multicall:
    case __HYPERVISOR_mmuext_op: return trace::record_words(event, op | arg1, uint32_t(args.a[1]));
    case __HYPERVISOR_grant_table_op:
      return trace::record_words(event, op | arg0 | arg2, uint32_t(args.a[0]), uint32_t(args.a[2]));
    case __HYPERVISOR_vcpu_op:
      return trace::record_words(event, op | arg0 | arg1, uint32_t(args.a[0]), uint32_t(args.a[1]));
    case __HYPERVISOR_sched_op: return trace::record_words(event, op | arg0, uint32_t(args.a[0]));
    default: return trace::record_words(event, op);
  }
}

// A slot's handler; an empty slot is -ENOSYS.
[[gnu::always_inline]] inline long call(Handler handler, Vcpu& vcpu, TrapFrame& frame, Arguments& args) {
  return handler ? handler(vcpu, frame, args) : -XEN_ENOSYS;
}

// The plain handler of `number`, null beyond the table. The number is compared whole:
// rax = 0x1_0000_0011 is not xen_version, it is -ENOSYS.
[[gnu::always_inline]] inline Handler plain_handler(uint64_t number) {
  return number < table_size ? handlers.h[number] : nullptr;
}

// A call inside a multicall (recorded by run_calls' own trace site) runs the plain handler.
// Each caller records the call first, before a handler rewrites its arguments.
[[gnu::always_inline]] inline long call_handler(Vcpu& vcpu, TrapFrame& frame, uint64_t number, Arguments& args) {
  count_call(number);
  return call(plain_handler(number), vcpu, frame, args);
}

long record_guest_call(Vcpu& vcpu, TrapFrame& frame, Arguments& args) {
  record_hypercall(frame.rax, args, false);
  return call(plain_handler(frame.rax), vcpu, frame, args);
}

// A guest's call of `number` while tracing is off: its handler, or the refusal.
constexpr Handler untraced_guest_slot(unsigned number) {
  return handlers.h[number] ? handlers.h[number] : detail::refuse_unknown_call;
}
constexpr HandlerTable untraced_guest_calls() {
  HandlerTable t;
  for (unsigned number = 0; number < table_size; ++number) t.h[number] = untraced_guest_slot(number);
  return t;
}
}  // namespace

// The slots of untraced_guest_calls while tracing is off; while it is on, record_guest_call in
// every slot (an empty slot too: Xen records a call it then refuses).
HandlerTable detail::guest_call_handlers = untraced_guest_calls();
uint64_t detail::call_counts[kCountedCalls];

// A number beyond the table: refused, and recorded while tracing is on (out of line, so the
// trace site is on this path only). A handler's signature: the arguments are where they are
// for the call through the table, so the fast path moves no register for this one.
long detail::refuse_unknown_call(Vcpu&, TrapFrame& frame, Arguments& args) {
  if (trace_points::on()) [[unlikely]]
    record_hypercall(frame.rax, args, false);
  return -XEN_ENOSYS;
}

// The guest re-executes its syscall (2 bytes before the rip it returns to) with the rewritten
// arguments; rax still holds the hypercall number.
void detail::continue_later(TrapFrame& frame) {
  perf::add(perf::Counter::hypercall_continuations);
  frame.rip -= 2;
}

namespace {
// Xen's mc_state flag: a multicall inside a multicall is -EINVAL, so nothing recurses on the
// hypervisor stack however the guest builds its lists. One vCPU is inside the hypervisor at
// a time (there is no preemption within it), so one flag serves them all.
bool in_multicall = false;

long run_calls(Vcpu& vcpu, TrapFrame& frame, Arguments& args) {
  const uint64_t list = args.a[0];
  const uint32_t count = uint32_t(args.a[1]);  // Xen's nr_calls is 32 bits
  for (uint32_t i = 0; i < count; ++i) {
    const uint64_t address = list + uint64_t(i) * sizeof(multicall_entry_t);
    if (i && preemption_requested()) {
      args.a[0] = address;
      args.a[1] = count - i;
      return restart;
    }
    multicall_entry_t entry;
    if (!guest_memory::read(vcpu, address, entry)) return -XEN_EFAULT;
    Arguments inner{{entry.args[0], entry.args[1], entry.args[2], entry.args[3], entry.args[4]}};
    if (trace_points::on()) [[unlikely]]
      record_hypercall(entry.op, inner, true);
    long result = call_handler(vcpu, frame, entry.op, inner);
    if (result == restart) {
      // The call stopped part way: its continuation goes back into the list, and the
      // multicall itself continues at this entry.
      for (unsigned a = 0; a < 5; ++a) entry.args[a] = inner.a[a];
      if (!guest_memory::write(vcpu, address, entry)) return -XEN_EFAULT;
      args.a[0] = address;
      args.a[1] = count - i;
      return restart;
    }
    entry.result = xen_ulong_t(result);
    bool written = guest_memory::write(vcpu, address + offsetof(multicall_entry_t, result), entry.result);
    // As Xen: an iret ends the batch (it changed where the guest resumes) and the multicall
    // returns what it returns; storing its result is best effort (the guest may be in user mode now).
    if (entry.op == __HYPERVISOR_iret) return result;
    if (!written) return -XEN_EFAULT;
    if (!vcpu.domain->alive()) break;
  }
  return 0;
}
}  // namespace

void trace_guest_calls(bool on) {
  for (unsigned number = 0; number < table_size; ++number)
    detail::guest_call_handlers.h[number] = on ? record_guest_call : untraced_guest_slot(number);
}

// Each entry runs as its own hypercall; results are written back into the guest's array.
long multicall(Vcpu& vcpu, TrapFrame& frame, Arguments& args) {
  if (in_multicall) return -XEN_EINVAL;
  in_multicall = true;
  long result = run_calls(vcpu, frame, args);
  in_multicall = false;
  return result;
}
}  // namespace hypercall
