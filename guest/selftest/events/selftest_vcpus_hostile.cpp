// selftest=vcpus, its hostile half: what a guest may not do with its vCPUs, and Xen 4.17's
// answers (do_vcpu_op, arch_set_info_guest, evtchn_bind_virq / bind_ipi / bind_vcpu).
// Before the other vCPUs run: every VCPUOP on a vCPU id the domain does not have is -ENOENT
// (and the id is 32 bits: 2^32 is vCPU 0); a vCPU without a context cannot come up (-EINVAL),
// goes down again quietly, has its runstate offline and takes no singleshot timer from another
// vCPU (-EINVAL) but a periodic one; initialise of the running vCPU 0 is -EEXIST, of an
// unreadable context -EFAULT; bad contexts for the last vCPU are -EINVAL and leave it without a
// context (non-canonical addresses, LDT and GDT out of bounds, a GDT frame that is a page
// table, a CR3 that is no frame of the domain's, an L1 table, a writable data frame, the
// shared_info frame, user mode without a user table); bindings to vCPUs the domain does not
// have (-ENOENT), global VIRQs beyond vCPU 0 (-EINVAL), bind_vcpu of what cannot move. Once
// every vCPU is up: a VIRQ bound twice is -EEXIST, IPI and per-vCPU VIRQ ports do not move,
// and an interdomain port moved to another vCPU delivers there.
#include "arch/event_channel_ops.h"
#include "arch/xen.h"
#include "kernel/boot/frames.h"
#include "kernel/events/events.h"
#include "kernel/memory/physical_memory.h"
#include "kernel/smp/vcpus.h"
#include "pv-kernel-patches/shared_info.h"
#include "selftest/events/vcpus_selftest_support.h"
#include "selftest/selftest_page_tables.h"

namespace kernel::vcpu_tests {
namespace {
constexpr uint64_t kNonCanonical = 0x0000800000000000ull;

vcpu_guest_context scratch;
vcpu_guest_context context;
uint64_t some_data;  // a frame of the kernel's data, mapped writable

long bind_virq(uint32_t virq, uint32_t vcpu, evtchn_port_t* port = nullptr) {
  evtchn_bind_virq_t request{};
  request.virq = virq;
  request.vcpu = vcpu;
  const long rc = xen::event_channel_op(EVTCHNOP_bind_virq, &request);
  if (port) *port = request.port;
  return rc;
}
long bind_vcpu(evtchn_port_t port, uint32_t vcpu) {
  evtchn_bind_vcpu_t request{port, vcpu};
  return xen::event_channel_op(EVTCHNOP_bind_vcpu, &request);
}
uint32_t status_vcpu(evtchn_port_t port) {
  evtchn_status_t status{};
  evtchn::status(DOMID_SELF, port, status);
  return status.vcpu;
}

void out_of_range(SelfTest& test, unsigned count) {
  const int commands[] = {VCPUOP_initialise,
                          VCPUOP_up,
                          VCPUOP_down,
                          VCPUOP_is_up,
                          VCPUOP_get_runstate_info,
                          VCPUOP_register_runstate_memory_area,
                          VCPUOP_set_periodic_timer,
                          VCPUOP_stop_periodic_timer,
                          VCPUOP_set_singleshot_timer,
                          VCPUOP_stop_singleshot_timer,
                          VCPUOP_register_vcpu_info,
                          VCPUOP_send_nmi,
                          VCPUOP_get_physid,
                          VCPUOP_register_vcpu_time_memory_area,
                          99};
  const uint64_t ids[] = {count, kMaxVcpus, 1000, 0xffffffffu};
  bool all = true;
  for (int command : commands)
    for (uint64_t id : ids)
      all = all &&
            arch::hypercall(__HYPERVISOR_vcpu_op, uint64_t(uint32_t(command)), id, arch::arg(&scratch)) == -XEN_ENOENT;
  test.check("every VCPUOP on a vCPU the domain does not have is -ENOENT", all, true);
  test.check("  an unknown VCPUOP on vCPU 0 is -ENOSYS", vcpu_op_on(99, 0), -XEN_ENOSYS);
  test.check("  the vCPU id is 32 bits: 2^32 is vCPU 0 (up)", vcpu_op_on(VCPUOP_is_up, 1ull << 32), 1);
}

void without_context(SelfTest& test, unsigned spare) {
  test.check("VCPUOP_is_up of a vCPU without a context is 0", vcpu_op_on(VCPUOP_is_up, spare), 0);
  test.check("VCPUOP_up of it is -EINVAL", vcpu_op_on(VCPUOP_up, spare), -XEN_EINVAL);
  test.check("VCPUOP_down of it (down already) is 0", vcpu_op_on(VCPUOP_down, spare), 0);
  vcpu_runstate_info info{};
  test.check("its runstate is offline", runstate_of(spare, info) == 0 && info.state == RUNSTATE_offline, true);
  vcpu_set_singleshot_timer_t timer{};
  timer.timeout_abs_ns = smp::now_ns() + 1'000'000'000;
  test.check("VCPUOP_set_singleshot_timer for another vCPU is -EINVAL",
             xen::vcpu_op(VCPUOP_set_singleshot_timer, spare, &timer), -XEN_EINVAL);
  test.check("VCPUOP_stop_singleshot_timer for another vCPU is -EINVAL",
             vcpu_op_on(VCPUOP_stop_singleshot_timer, spare), -XEN_EINVAL);
  vcpu_set_periodic_timer_t periodic{};
  periodic.period_ns = 500'000;
  test.check("VCPUOP_set_periodic_timer for it below 1 ms is -EINVAL",
             xen::vcpu_op(VCPUOP_set_periodic_timer, spare, &periodic), -XEN_EINVAL);
  periodic.period_ns = 50'000'000;
  test.check("  of 50 ms works (another vCPU's periodic timer may be set)",
             xen::vcpu_op(VCPUOP_set_periodic_timer, spare, &periodic), 0);
  test.check("  and stops", vcpu_op_on(VCPUOP_stop_periodic_timer, spare), 0);
  test.check("VCPUOP_initialise of vCPU 0 (running) is -EEXIST", initialise(0, scratch), -XEN_EEXIST);
  test.check("VCPUOP_initialise from unreadable memory is -EFAULT",
             arch::hypercall(__HYPERVISOR_vcpu_op, VCPUOP_initialise, spare, kUnmapped), -XEN_EFAULT);
  test.check("  also for vCPU 0 (read before it looks)",
             arch::hypercall(__HYPERVISOR_vcpu_op, VCPUOP_initialise, 0, kUnmapped), -XEN_EFAULT);
}

// An L1 table in use: the one mapping the kernel's data.
Mfn an_l1_table() {
  pv::PageTableSlot slot;
  if (!walk(kernel_l4(), reinterpret_cast<uint64_t>(&some_data), lib::Level::l2, slot)) return Mfn{0};
  return read_entry(slot).mfn();
}

// Each bad context for vCPU `spare`: -EINVAL, and it stays without a context.
void bad_contexts(SelfTest& test, unsigned spare) {
  struct Case {
    const char* what;
    void (*spoil)(vcpu_guest_context&);
  };
  static const Case cases[] = {
      {"a non-canonical rip", [](vcpu_guest_context& c) { c.user_regs.rip = kNonCanonical; }},
      {"a non-canonical rsp", [](vcpu_guest_context& c) { c.user_regs.rsp = kNonCanonical; }},
      {"a non-canonical kernel_sp", [](vcpu_guest_context& c) { c.kernel_sp = kNonCanonical; }},
      {"a non-canonical event callback", [](vcpu_guest_context& c) { c.event_callback_eip = kNonCanonical; }},
      {"a non-canonical failsafe callback", [](vcpu_guest_context& c) { c.failsafe_callback_eip = kNonCanonical; }},
      {"a non-canonical syscall callback", [](vcpu_guest_context& c) { c.syscall_callback_eip = kNonCanonical; }},
      {"a non-canonical trap handler", [](vcpu_guest_context& c) { c.trap_ctxt[14].address = kNonCanonical; }},
      {"a non-canonical fs base", [](vcpu_guest_context& c) { c.fs_base = kNonCanonical; }},
      {"a non-canonical kernel gs base", [](vcpu_guest_context& c) { c.gs_base_kernel = kNonCanonical; }},
      {"an LDT base not page aligned",
       [](vcpu_guest_context& c) {
         c.ldt_ents = 1;
         c.ldt_base = 0x1001;
       }},
      {"an LDT in the hypervisor's range",
       [](vcpu_guest_context& c) {
         c.ldt_ents = 1;
         c.ldt_base = 0xffff830000000000ull;
       }},
      {"an LDT of 8193 entries", [](vcpu_guest_context& c) { c.ldt_ents = 8193; }},
      {"a GDT of 17 frames", [](vcpu_guest_context& c) { c.gdt_ents = 16 * 512 + 1; }},
      {"a GDT into the reserved entries", [](vcpu_guest_context& c) { c.gdt_ents = 14 * 512 + 1; }},
      {"a GDT frame that is the kernel's L4",
       [](vcpu_guest_context& c) {
         c.gdt_ents = 16;
         c.gdt_frames[0] = kernel_l4().value;
       }},
      {"CR3 0", [](vcpu_guest_context& c) { c.ctrlreg[3] = 0; }},
      {"a CR3 beyond every frame", [](vcpu_guest_context& c) { c.ctrlreg[3] = 0xffffffffffull << 12; }},
      {"a CR3 that is an L1 table of its own", [](vcpu_guest_context& c) { c.ctrlreg[3] = an_l1_table().value << 12; }},
      {"a CR3 that is a writable data frame",
       [](vcpu_guest_context& c) { c.ctrlreg[3] = va_to_mfn(reinterpret_cast<uint64_t>(&some_data)).value << 12; }},
      {"a CR3 that is the shared_info frame",
       [](vcpu_guest_context& c) {
         PageTableEntry entry;
         pv::PageTableSlot slot;
         if (walk(kernel_l4(), reinterpret_cast<uint64_t>(shared_info()), lib::Level::l1, slot))
           entry = read_entry(slot);
         c.ctrlreg[3] = entry.mfn().value << 12;
       }},
      {"user mode without a user table", [](vcpu_guest_context& c) { c.flags = 0; }},
  };
  bool all = true;
  for (const Case& bad : cases) {
    smp::secondary_context(spare, context);
    bad.spoil(context);
    const long rc = initialise(spare, context);
    test.check(bad.what, rc, -XEN_EINVAL);
    all = all && rc == -XEN_EINVAL;
  }
  test.check("after them the vCPU still has no context (VCPUOP_up -EINVAL)", vcpu_op_on(VCPUOP_up, spare), -XEN_EINVAL);
  test.check("  and is down", vcpu_op_on(VCPUOP_is_up, spare), 0);
}

void bindings_before(SelfTest& test, unsigned count) {
  test.check("EVTCHNOP_bind_virq VIRQ_TIMER on a vCPU the domain does not have is -ENOENT",
             bind_virq(VIRQ_TIMER, count), -XEN_ENOENT);
  test.check("  on vCPU 0xffffffff -ENOENT", bind_virq(VIRQ_TIMER, 0xffffffffu), -XEN_ENOENT);
  test.check("a global VIRQ on vCPU 1 is -EINVAL", bind_virq(VIRQ_ENOMEM, 1), -XEN_EINVAL);
  test.check("  on a vCPU the domain does not have -EINVAL too (checked first)", bind_virq(VIRQ_ENOMEM, count),
             -XEN_EINVAL);
  test.check("a VIRQ beyond NR_VIRQS is -EINVAL", bind_virq(NR_VIRQS, 0), -XEN_EINVAL);
  evtchn_port_t ipi = 0;
  test.check("EVTCHNOP_bind_ipi on a vCPU the domain does not have is -ENOENT", evtchn::bind_ipi(count, ipi),
             -XEN_ENOENT);
  evtchn_port_t unbound = 0, closed = 0;
  test.check("an unbound port, and a port closed again",
             evtchn::alloc_unbound(DOMID_SELF, DOMID_SELF, unbound) == 0 &&
                 evtchn::alloc_unbound(DOMID_SELF, DOMID_SELF, closed) == 0 && evtchn::close(closed) == 0,
             true);
  test.check("EVTCHNOP_bind_vcpu to a vCPU the domain does not have is -ENOENT", bind_vcpu(unbound, count),
             -XEN_ENOENT);
  test.check("  to vCPU 0xffffffff -ENOENT", bind_vcpu(unbound, 0xffffffffu), -XEN_ENOENT);
  test.check("  of port 0 is -EINVAL", bind_vcpu(0, 1), -XEN_EINVAL);
  test.check("  of a closed port is -EINVAL", bind_vcpu(closed, 1), -XEN_EINVAL);
  test.check("  of a port that does not exist is -EINVAL", bind_vcpu(5000, 1), -XEN_EINVAL);
  test.check("  from unreadable memory is -EFAULT",
             arch::hypercall(__HYPERVISOR_event_channel_op, EVTCHNOP_bind_vcpu, kUnmapped), -XEN_EFAULT);
  test.check("  of an unbound port to vCPU 1 works (before it runs)", bind_vcpu(unbound, 1), 0);
  test.check("  EVTCHNOP_status says vCPU 1", status_vcpu(unbound), 1);
  test.check("  and back to vCPU 0", bind_vcpu(unbound, 0) == 0 && status_vcpu(unbound) == 0, true);
  test.check("  closed", evtchn::close(unbound), 0);
  evtchn_init_control_t fifo{};
  fifo.vcpu = count;
  test.check("EVTCHNOP_init_control for a vCPU the domain does not have is -ENOENT",
             xen::event_channel_op(EVTCHNOP_init_control, &fifo), -XEN_ENOENT);
}

unsigned moved_on = ~0u;
uint64_t moved_events;
void on_moved(uint32_t) {
  __atomic_store_n(&moved_on, current_vcpu_id(), __ATOMIC_SEQ_CST);
  __atomic_fetch_add(&moved_events, 1, __ATOMIC_SEQ_CST);
}
}  // namespace

vcpu_guest_context& scratch_context() { return scratch; }

void vcpus_hostile_before_bring_up(SelfTest& test, unsigned count) {
  const unsigned spare = count - 1;
  out_of_range(test, count);
  without_context(test, spare);
  bad_contexts(test, spare);
  bindings_before(test, count);
}

void vcpus_hostile_after_bring_up(SelfTest& test, unsigned count) {
  const unsigned last = count - 1;
  test.check("EVTCHNOP_bind_virq VIRQ_TIMER on a vCPU that has it bound is -EEXIST", bind_virq(VIRQ_TIMER, last),
             -XEN_EEXIST);
  test.check("EVTCHNOP_bind_vcpu of a vCPU's VIRQ_TIMER port is -EINVAL (per-vCPU VIRQ)",
             bind_vcpu(smp::timer_port(last), 0), -XEN_EINVAL);
  test.check("  of its IPI port is -EINVAL", bind_vcpu(smp::ipi_port(last), 0), -XEN_EINVAL);
  test.check("  both keep their vCPU",
             status_vcpu(smp::timer_port(last)) == last && status_vcpu(smp::ipi_port(last)) == last, true);
  evtchn_port_t global = 0;
  test.check("a global VIRQ bound on vCPU 0", bind_virq(VIRQ_ENOMEM, 0, &global), 0);
  test.check("  moves to another vCPU (bind_vcpu)", bind_vcpu(global, last) == 0 && status_vcpu(global) == last, true);
  test.check("  closed", evtchn::close(global), 0);
  test.check("  and bound again on vCPU 0 (its binding went with the port)", bind_virq(VIRQ_ENOMEM, 0, &global), 0);
  evtchn::close(global);

  // An interdomain channel to ourselves, its local end moved to the last vCPU: a send on the
  // other end is taken there.
  evtchn_port_t remote = 0, local = 0;
  test.check("an interdomain channel to ourselves",
             evtchn::alloc_unbound(DOMID_SELF, DOMID_SELF, remote) == 0 &&
                 evtchn::bind_interdomain(DOMID_SELF, remote, local) == 0,
             true);
  events_mask(local);
  __atomic_fetch_and(&shared_info()->evtchn_pending[local / 64], ~(xen_ulong_t{1} << (local % 64)), __ATOMIC_SEQ_CST);
  test.check("  its local end moved to the last vCPU", bind_vcpu(local, last), 0);
  events_set_vcpu(local, last);
  test.check("  a handler there", events_attach(local, on_moved), true);
  test.check("  a send on the other end works", evtchn::send(remote), 0);
  test.check("  taken by that vCPU",
             smp::block_until([] { return __atomic_load_n(&moved_events, __ATOMIC_SEQ_CST) > 0; },
                              smp::now_ns() + 2'000'000'000),
             true);
  test.check("  on it", moved_on, long(last));
  events_detach(local);
  test.check("  both ends closed", evtchn::close(local) == 0 && evtchn::close(remote) == 0, true);
}

}  // namespace kernel::vcpu_tests
