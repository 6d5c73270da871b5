// selftest=vcpus-fifo: FIFO event channels on several vCPUs, as Xen 4.17's event_fifo.c: each
// vCPU gives its own control block (EVTCHNOP_init_control names the vCPU; a second one for the
// same vCPU is -EINVAL, one for a vCPU the domain does not have -ENOENT); an event goes to the
// queues of the vCPU its port notifies (an IPI port of vCPU 1 becomes HEAD of vCPU 1's queue
// with its READY bit and vCPU 1's upcall flag, vCPU 0's queues untouched); an event for a vCPU
// without a control block is dropped (not even PENDING); a port moved to vCPU 1 with
// EVTCHNOP_bind_vcpu is linked behind vCPU 1's tail. vCPU 0 goes on taking its own events
// (the timer) through its queues. The other vCPUs are never started: their queues are only
// looked at. The kernel stays on FIFO afterwards. The same on Xen 4.17 (dom0_max_vcpus=).
#include "arch/event_channel_ops.h"
#include "arch/xen.h"
#include "kernel/console/console.h"
#include "kernel/events/events.h"
#include "kernel/events/time.h"
#include "kernel/events/timer.h"
#include "kernel/memory/page_allocator.h"
#include "kernel/smp/vcpus.h"
#include "pv-kernel-patches/shared_info.h"
#include "selftest/events/events_selftests.h"
#include "selftest/selftest_page_tables.h"

namespace kernel {
namespace {
constexpr uint32_t kOffsets[] = {0, 1024, 2048};  // vCPU k's control block in the one frame
constexpr event_word_t kPending = 1u << EVTCHN_FIFO_PENDING, kLinked = 1u << EVTCHN_FIFO_LINKED;
constexpr unsigned kDefaultQueue = EVTCHN_FIFO_PRIORITY_DEFAULT;
constexpr unsigned kBits = sizeof(xen_ulong_t) * 8;

long init_control(Mfn frame, uint32_t offset, uint32_t vcpu) {
  evtchn_init_control_t request{};
  request.control_gfn = frame.value;
  request.offset = offset;
  request.vcpu = vcpu;
  return xen::event_channel_op(EVTCHNOP_init_control, &request);
}
long bind_vcpu(evtchn_port_t port, uint32_t vcpu) {
  evtchn_bind_vcpu_t request{port, vcpu};
  return xen::event_channel_op(EVTCHNOP_bind_vcpu, &request);
}
template <typename T>
T load(const T& value) {
  return __atomic_load_n(&value, __ATOMIC_SEQ_CST);
}
}  // namespace

void selftest_vcpus_fifo(SelfTest& test) {
  const unsigned count = smp::vcpu_count();
  test.note("vCPUs", count);
  test.check("at least three vCPUs (dom0_max_vcpus=)", count >= 3, true);
  if (count < 3) return;
  const Pfn control_pfn = allocate_zeroed_frame(), array_pfn = allocate_zeroed_frame();
  const Mfn control_mfn = pfn_to_mfn(control_pfn), array_mfn = pfn_to_mfn(array_pfn);
  auto control = [&](unsigned vcpu) {
    return reinterpret_cast<evtchn_fifo_control_block*>(pfn_to_va(control_pfn) + kOffsets[vcpu]);
  };
  auto* words = reinterpret_cast<event_word_t*>(pfn_to_va(array_pfn));
  for (evtchn_port_t port = 0; port < 4096 / sizeof(event_word_t); ++port)  // what the kernel masked stays masked
    words[port] = (shared_info()->evtchn_mask[port / kBits] >> (port % kBits) & 1) ? 1u << EVTCHN_FIFO_MASKED : 0;

  test.check("EVTCHNOP_init_control for vCPU 0 works", init_control(control_mfn, kOffsets[0], 0), 0);
  events_use_fifo(control(0), words);
  test.check("  for vCPU 1 (its own block) works", init_control(control_mfn, kOffsets[1], 1), 0);
  test.check("  for vCPU 1 again is -EINVAL", init_control(control_mfn, kOffsets[2], 1), -XEN_EINVAL);
  test.check("  for a vCPU the domain does not have is -ENOENT", init_control(control_mfn, kOffsets[2], 1000),
             -XEN_ENOENT);
  evtchn_expand_array_t expand{array_mfn.value};
  test.check("EVTCHNOP_expand_array works", xen::event_channel_op(EVTCHNOP_expand_array, &expand), 0);

  evtchn_port_t ipi1 = 0, ipi2 = 0;
  test.check("an IPI port of vCPU 1 and one of vCPU 2",
             evtchn::bind_ipi(1, ipi1) == 0 && evtchn::bind_ipi(2, ipi2) == 0, true);
  vcpu_info_t* info1 = &shared_info()->vcpu_info[1];
  vcpu_info_t* info2 = &shared_info()->vcpu_info[2];
  info1->evtchn_upcall_pending = 0;
  info2->evtchn_upcall_pending = 0;
  const uint32_t head0 = load(control(0)->head[kDefaultQueue]);
  test.check("EVTCHNOP_send to vCPU 1's IPI port works", evtchn::send(ipi1), 0);
  test.check("  the event is the HEAD of vCPU 1's queue", load(control(1)->head[kDefaultQueue]), ipi1);
  test.check("  READY in vCPU 1's block", (load(control(1)->ready) >> kDefaultQueue) & 1, 1);
  test.check("  pending and linked", words[ipi1] & (kPending | kLinked), kPending | kLinked);
  test.check("  vCPU 1's upcall flag set", info1->evtchn_upcall_pending, 1);
  test.check("  vCPU 0's queue untouched", load(control(0)->head[kDefaultQueue]), head0);
  test.check("EVTCHNOP_send to vCPU 2's IPI port (no control block) works", evtchn::send(ipi2), 0);
  test.check("  the event is dropped: not even pending", words[ipi2] & kPending, 0);
  test.check("  vCPU 2's upcall flag not set", info2->evtchn_upcall_pending, 0);

  // An unbound port moved to vCPU 1, then bound by ourselves: the other end's sends reach it there.
  evtchn_port_t remote = 0, local = 0;
  test.check("an unbound port moved to vCPU 1",
             evtchn::alloc_unbound(DOMID_SELF, DOMID_SELF, remote) == 0 && bind_vcpu(remote, 1) == 0, true);
  test.check("  bound by ourselves", evtchn::bind_interdomain(DOMID_SELF, remote, local), 0);
  test.check("  a send on our end works", evtchn::send(local), 0);
  test.check("  the event is linked behind vCPU 1's tail", words[ipi1] & EVTCHN_FIFO_LINK_MASK, remote);
  test.check("  and is pending there", words[remote] & (kPending | kLinked), kPending | kLinked);
  test.check("vCPU 0's timer still arrives through its own queue", sleep_until(system_time_ns() + 2'000'000) > 0, true);
  test.check(
      "ports closed",
      evtchn::close(local) == 0 && evtchn::close(remote) == 0 && evtchn::close(ipi1) == 0 && evtchn::close(ipi2) == 0,
      true);
  page_table_tests::check_audit(test);
}

// selftest=vcpus-down-last: every other vCPU is brought up and taken down again; vCPU 0, the
// last one up, then takes itself down, which Xen answers by powering the domain off
// (domain_shutdown(SHUTDOWN_poweroff)): the kernel never returns from it.
void selftest_vcpus_down_last(SelfTest& test) {
  const unsigned count = smp::vcpu_count();
  test.note("vCPUs", count);
  test.check("at least two vCPUs", count >= 2, true);
  if (count < 2) return;
  test.check("vCPU 0's IPI port bound", smp::init(), 0);
  for (unsigned id = 1; id < count; ++id) test.check("a vCPU brought up", smp::start(id).ok(), true);
  for (unsigned id = 1; id < count; ++id) {
    test.check("  and taken down", xen::vcpu_op(VCPUOP_down, id, nullptr), 0);
    test.check("  it is down", xen::vcpu_op(VCPUOP_is_up, id, nullptr), 0);
  }
  test.check("vCPU 0 is the last one up", xen::vcpu_op(VCPUOP_is_up, 0, nullptr), 1);
  print("selftest vcpus-down-last: VCPUOP_down of the last vCPU up: the domain powers off now\n");
  const long rc = xen::vcpu_op(VCPUOP_down, 0, nullptr);
  test.check("VCPUOP_down of the last vCPU up returned (it must power the domain off)", rc, -1000);
}
}  // namespace kernel
