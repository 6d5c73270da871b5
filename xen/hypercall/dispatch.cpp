#include "hypercall/dispatch.h"
#include "mm/xen_abi.h"
#include <xen/errno.h>
#include <xen/xen.h>
#include "domain/domain.h"
#include "hypervisor/summary.h"
#include "pv/guest_memory.h"
#include "trace/format/events.h"
#include "tracing/trace_buffers.h"

namespace hypercall {
namespace {
constexpr unsigned table_size = 64;

constexpr auto make_table() {
  struct Table { Handler h[table_size]{}; } t;
  t.h[__HYPERVISOR_set_trap_table] = set_trap_table;
  t.h[__HYPERVISOR_mmu_update] = mmu_update;
  t.h[__HYPERVISOR_stack_switch] = stack_switch;
  t.h[__HYPERVISOR_set_callbacks] = set_callbacks;
  t.h[__HYPERVISOR_fpu_taskswitch] = fpu_taskswitch;
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
  t.h[__HYPERVISOR_mmuext_op] = mmuext_op;
  t.h[__HYPERVISOR_sched_op] = sched_op;
  t.h[__HYPERVISOR_callback_op] = callback_op;
  t.h[__HYPERVISOR_event_channel_op] = event_channel_op;
  t.h[__HYPERVISOR_sysctl] = sysctl;
  t.h[__HYPERVISOR_physdev_op] = physdev_op;
  return t;
}
constexpr auto handlers = make_table();
}  // namespace

namespace {
// Inlined into both callers (dispatch and multicall): every hypercall goes through here, and the trace point's
// out-of-line path would otherwise tip the compiler into a call and a frame of its own.
[[gnu::always_inline]] inline long call_handler(Vcpu& vcpu, TrapFrame& frame, unsigned number,
                                                const Arguments& args) {
  trace::event(trace::events::kPvHypercallV2, number);  // op only; first, while `number` is in a register
  summary::count_hypercall(number);
  if (number >= table_size || !handlers.h[number]) return -XEN_ENOSYS;
  return handlers.h[number](vcpu, frame, args);
}
}  // namespace

void dispatch(Vcpu& vcpu, TrapFrame& frame) {
  Arguments args{{frame.rdi, frame.rsi, frame.rdx, frame.r10, frame.r8}};
  frame.rax = uint64_t(call_handler(vcpu, frame, unsigned(frame.rax), args));
}

// Each entry runs as its own hypercall; results are written back into the guest's array.
// iret and nested multicalls make no sense inside a batch and are refused per entry.
long multicall(Vcpu& vcpu, TrapFrame& frame, const Arguments& args) {
  uint64_t list = args.a[0];
  uint64_t count = args.a[1];
  for (uint64_t i = 0; i < count; ++i) {
    multicall_entry_t entry;
    uint64_t address = list + i * sizeof(entry);
    if (!guest_memory::read(vcpu, address, entry)) return -XEN_EFAULT;
    Arguments inner{{entry.args[0], entry.args[1], entry.args[2], entry.args[3], entry.args[4]}};
    bool refused = entry.op == __HYPERVISOR_iret || entry.op == __HYPERVISOR_multicall;
    entry.result = refused ? xen_ulong_t(-XEN_EINVAL) : xen_ulong_t(call_handler(vcpu, frame, unsigned(entry.op), inner));
    if (!guest_memory::write(vcpu, address + offsetof(multicall_entry_t, result), entry.result)) return -XEN_EFAULT;
    if (!vcpu.domain->alive()) break;
  }
  return 0;
}
}  // namespace hypercall
