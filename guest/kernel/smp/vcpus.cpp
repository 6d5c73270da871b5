#include "kernel/smp/vcpus.h"

#include "arch/event_channel_ops.h"
#include "lib/atomic.h"
#include "arch/trap_frame.h"
#include "kernel/boot/frames.h"
#include "kernel/console/panic.h"
#include "kernel/events/events.h"
#include "kernel/events/time.h"
#include "kernel/memory/page_allocator.h"
#include "pv-kernel-patches/traps.h"

extern "C" {
void secondary_vcpu_entry();
void secondary_event_callback_entry();
void failsafe_callback_entry();
void syscall_callback_entry();
}

namespace kernel::smp {
namespace {

// One work item at a time per vCPU: vCPU 0 fills it and bumps `posted`; the vCPU runs it and
// sets `done` to what it ran. Each on its own cache line (under Xen the vCPUs run in parallel).
struct alignas(64) Mailbox {
  Work work = nullptr;
  uint64_t argument = 0;
  long result = 0;
  uint32_t posted = 0, done = 0;
};
Mailbox boxes[kMaxVcpus];

uint32_t ipi_ports[kMaxVcpus], timer_ports[kMaxVcpus];
uint64_t ipis[kMaxVcpus], timers[kMaxVcpus];
uint32_t arrivals[kMaxVcpus];
// Per vCPU: 1 + the vCPU that last ran the handler of its IPI port (0: none yet).
unsigned ipi_takers[kMaxVcpus];
unsigned count_cache = 0;

// The secondaries' vcpu_infos, moved out of shared_info into one kernel frame (vCPU k's at
// k * 64, as Linux's per-CPU vcpu_info).
vcpu_info_t* info_frame = nullptr;
Mfn info_mfn{0};

using guest_atomic::load_acquire;

void on_ipi(uint32_t port) {
  const unsigned me = current_vcpu_id();
  __atomic_fetch_add(&ipis[me], 1, __ATOMIC_SEQ_CST);
  for (unsigned id = 0; id < kMaxVcpus; ++id)
    if (load_acquire(ipi_ports[id]) == port) __atomic_store_n(&ipi_takers[id], me + 1, __ATOMIC_SEQ_CST);
}
void on_timer(uint32_t) { __atomic_fetch_add(&timers[current_vcpu_id()], 1, __ATOMIC_SEQ_CST); }

long register_info(unsigned id) {
  if (!info_frame) {
    const Pfn pfn = allocate_zeroed_frame();
    info_mfn = pfn_to_mfn(pfn);
    info_frame = reinterpret_cast<vcpu_info_t*>(pfn_to_va(pfn));
  }
  vcpu_register_vcpu_info request{};
  request.mfn = info_mfn.value;
  request.offset = uint32_t(id * sizeof(vcpu_info_t));
  const long rc = xen::vcpu_op(VCPUOP_register_vcpu_info, id, &request);
  if (rc == 0) set_registered_vcpu_info(id, &info_frame[id]);
  return rc;
}
}  // namespace

uint64_t now_ns() { return system_time_ns(); }

unsigned vcpu_count() {
  if (count_cache) return count_cache;
  unsigned count = 1;
  while (count < kMaxVcpus && xen::vcpu_op(VCPUOP_is_up, count, nullptr) != -XEN_ENOENT) ++count;
  count_cache = count;
  return count;
}

long init() { return ipi_ports[0] ? 0 : events_bind_ipi(0, on_ipi, ipi_ports[0]); }

void secondary_context(unsigned id, vcpu_guest_context& context) {
  context = vcpu_guest_context{};
  context.flags = VGCF_in_kernel;  // down until VCPUOP_up
  context.user_regs.rip = reinterpret_cast<uint64_t>(secondary_vcpu_entry);
  context.user_regs.rsp = secondary_stack_top(id);
  context.user_regs.rdi = id;
  context.user_regs.cs = FLAT_KERNEL_CS & ~3u;  // RPL 0: the hypervisor makes it the guest kernel's 3
  context.user_regs.ss = FLAT_KERNEL_SS & ~3u;
  context.user_regs.rflags = 0x202;
  context.kernel_ss = FLAT_KERNEL_SS & ~3u;
  context.kernel_sp = secondary_stack_top(id);
  pv::traps_fill_context(context.trap_ctxt);
  context.event_callback_eip = reinterpret_cast<uint64_t>(secondary_event_callback_entry);
  context.failsafe_callback_eip = reinterpret_cast<uint64_t>(failsafe_callback_entry);
  context.syscall_callback_eip = reinterpret_cast<uint64_t>(syscall_callback_entry);
  context.ctrlreg[3] = kernel_l4().value << 12;
}

StartSteps start(unsigned id, bool skip_initialise) {
  StartSteps steps;
  if (id == 0 || id >= kMaxVcpus) panic("smp: no vCPU %u to start", id);
  if ((steps.bind_ipi = ipi_ports[id] ? 0 : events_bind_ipi(id, on_ipi, ipi_ports[id])) != 0) return steps;
  if ((steps.bind_timer = timer_ports[id] ? 0 : events_bind_virq_on(VIRQ_TIMER, id, on_timer, timer_ports[id])) != 0)
    return steps;
  if ((steps.register_info = register_info(id)) != 0) return steps;
  if (skip_initialise) {
    steps.initialise = 0;
  } else {
    static vcpu_guest_context context;  // 5 KiB: off the stack
    secondary_context(id, context);
    if ((steps.initialise = xen::vcpu_op(VCPUOP_initialise, id, &context)) != 0) return steps;
  }
  steps.up = xen::vcpu_op(VCPUOP_up, id, nullptr);
  return steps;
}

bool arrived(unsigned id) { return id < kMaxVcpus && load_acquire(arrivals[id]) != 0; }

void post(unsigned id, Work work, uint64_t argument) {
  Mailbox& box = boxes[id];
  box.work = work;
  box.argument = argument;
  __atomic_store_n(&box.posted, box.posted + 1, __ATOMIC_RELEASE);
  evtchn::send(ipi_ports[id]);
}

bool wait(unsigned id, long& result, uint64_t timeout_ns) {
  Mailbox& box = boxes[id];
  const bool done =
      block_until([&] { return load_acquire(box.done) == load_acquire(box.posted); }, now_ns() + timeout_ns);
  result = done ? box.result : -1;
  return done;
}

bool run_on(unsigned id, Work work, uint64_t argument, long& result, uint64_t timeout_ns) {
  post(id, work, argument);
  return wait(id, result, timeout_ns);
}

uint32_t ipi_port(unsigned id) { return id < kMaxVcpus ? ipi_ports[id] : 0; }
uint32_t timer_port(unsigned id) { return id < kMaxVcpus ? timer_ports[id] : 0; }
uint64_t ipis_taken(unsigned id) { return id < kMaxVcpus ? load_acquire(ipis[id]) : 0; }
uint64_t timer_events(unsigned id) { return id < kMaxVcpus ? load_acquire(timers[id]) : 0; }
unsigned ipi_taken_on(unsigned id) { return id < kMaxVcpus ? load_acquire(ipi_takers[id]) - 1 : ~0u; }
}  // namespace kernel::smp

using namespace kernel::smp;

// A secondary vCPU's life: it says it arrived, then runs what vCPU 0 hands it, blocked in
// between, and tells vCPU 0 each time it is done.
extern "C" [[noreturn]] void secondary_vcpu_main(unsigned id) {
  const unsigned me = kernel::current_vcpu_id();
  __atomic_store_n(&arrivals[me], id == me ? 1u : 2u, __ATOMIC_RELEASE);  // 2: the stack and rdi disagree
  Mailbox& box = boxes[me];
  for (;;) {
    block_until([&] { return load_acquire(box.posted) != box.done; }, 0);
    const uint32_t taken = load_acquire(box.posted);
    box.result = box.work(box.argument);
    __atomic_store_n(&box.done, taken, __ATOMIC_RELEASE);
    kernel::evtchn::send(ipi_ports[0]);
  }
}

// A secondary vCPU's event upcall: its own events only.
extern "C" void secondary_trap_dispatch(kernel::TrapFrame*) { kernel::events_handle_upcall(); }
