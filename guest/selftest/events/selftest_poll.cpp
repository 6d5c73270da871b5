// selftest=poll: SCHEDOP_poll as Xen 4.17's do_poll serves it (Linux's PV spinlock slow path,
// xen_qlock_wait, polls its masked per-CPU kick port and BUG()s on any error). More than 128
// ports is -EINVAL, an unreadable request or port list -EFAULT, a port beyond the domain's
// -EINVAL; a polled port already pending returns at once, masked and pending as it was; a
// poll with nothing pending sleeps until its timeout (system time), one whose timeout has
// passed returns at once, and so does an empty list once its timeout passes. The same checks
// run on Xen 4.17 (tests/integration/guest_abi/test_guest_poll.py).
#include <stdint.h>
#include <xen/xen.h>
#include <xen/sched.h>
#include "arch/xen.h"
#include "arch/event_channel_ops.h"
#include "kernel/events/time.h"
#include "selftest/events/events_selftests.h"
#include "pv-kernel-patches/shared_info.h"

namespace kernel {
namespace {
constexpr unsigned kBits = sizeof(xen_ulong_t) * 8;
constexpr uint64_t kTimeoutNs = 20'000'000;  // 20 ms

xen_ulong_t bit(evtchn_port_t port) { return xen_ulong_t{1} << (port % kBits); }
bool pending(evtchn_port_t port) {
  return __atomic_load_n(&shared_info()->evtchn_pending[port / kBits], __ATOMIC_SEQ_CST) & bit(port);
}
bool masked(evtchn_port_t port) {
  return __atomic_load_n(&shared_info()->evtchn_mask[port / kBits], __ATOMIC_SEQ_CST) & bit(port);
}
void set_mask(evtchn_port_t port, bool mask) {
  xen_ulong_t& word = shared_info()->evtchn_mask[port / kBits];
  if (mask)
    __atomic_fetch_or(&word, bit(port), __ATOMIC_SEQ_CST);
  else
    __atomic_fetch_and(&word, ~bit(port), __ATOMIC_SEQ_CST);
}
void clear_pending(evtchn_port_t port) {
  __atomic_fetch_and(&shared_info()->evtchn_pending[port / kBits], ~bit(port), __ATOMIC_SEQ_CST);
}
long poll(evtchn_port_t* ports, unsigned count, uint64_t timeout) {
  sched_poll_t request{};
  set_xen_guest_handle(request.ports, ports);
  request.nr_ports = count;
  request.timeout = timeout;
  return xen::sched_op(SCHEDOP_poll, &request);
}
}  // namespace

void selftest_poll(SelfTest& test) {
  evtchn_port_t port = 0;
  test.check("EVTCHNOP_bind_ipi on vCPU 0 works", evtchn::bind_ipi(0, port), 0);
  set_mask(port, true);
  evtchn_port_t many[129] = {};
  for (evtchn_port_t& each : many) each = port;
  test.check("SCHEDOP_poll of 129 ports is -EINVAL", poll(many, 129, 0), -XEN_EINVAL);
  test.check("SCHEDOP_poll with an unmapped request is -EFAULT",
             arch::hypercall(__HYPERVISOR_sched_op, SCHEDOP_poll, 0xffff800000000000ull), -XEN_EFAULT);
  test.check("SCHEDOP_poll of an unmapped port list is -EFAULT",
             poll(reinterpret_cast<evtchn_port_t*>(0xffff800000000000ull), 1, 0), -XEN_EFAULT);
  evtchn_port_t beyond = 100000;
  test.check("SCHEDOP_poll of a port beyond the domain's is -EINVAL", poll(&beyond, 1, 0), -XEN_EINVAL);

  test.check("EVTCHNOP_send on the masked IPI port works", evtchn::send(port), 0);
  test.check("  and makes it pending", pending(port), true);
  test.check("SCHEDOP_poll of the pending port returns 0 at once", poll(&port, 1, 0), 0);
  test.check("  and leaves it pending and masked", pending(port) && masked(port), true);
  evtchn_port_t two[2] = {beyond, port};
  test.check("SCHEDOP_poll of a list whose first port is beyond the domain's is -EINVAL", poll(two, 2, 0), -XEN_EINVAL);
  two[0] = port;
  two[1] = beyond;
  test.check("SCHEDOP_poll of a list whose first port is pending returns 0 before the bad one", poll(two, 2, 0), 0);
  clear_pending(port);

  uint64_t start = system_time_ns();
  test.check("SCHEDOP_poll of a port not pending, timeout in 20 ms, returns 0", poll(&port, 1, start + kTimeoutNs), 0);
  uint64_t slept = system_time_ns() - start;
  test.check("  after its timeout", slept >= kTimeoutNs / 2, true);
  test.check("  the port still not pending", pending(port), false);
  start = system_time_ns();
  test.check("SCHEDOP_poll whose timeout has passed returns 0", poll(&port, 1, 1), 0);
  test.check("  at once (under a second)", system_time_ns() - start < 1'000'000'000ull, true);
  start = system_time_ns();
  test.check("SCHEDOP_poll of no port, timeout in 20 ms, returns 0", poll(nullptr, 0, start + kTimeoutNs), 0);
  test.check("  after its timeout", system_time_ns() - start >= kTimeoutNs / 2, true);

  set_mask(port, false);
  test.check("EVTCHNOP_close of the port works", evtchn::close(port), 0);
}
}  // namespace kernel
