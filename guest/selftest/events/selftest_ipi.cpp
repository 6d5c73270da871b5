// selftest=ipi: EVTCHNOP_bind_ipi as Xen 4.17's event_channel.c serves it (Linux's
// xen_smp_intr_init binds four per vCPU and BUG()s if one fails): each call a new port, the
// status an IPI of the vCPU, EVTCHNOP_send on it delivered to that vCPU (the pending bit of a
// masked port, then the upcall once unmasked), close frees it; a vCPU the domain does not
// have is -ENOENT, an unreadable request -EFAULT. The same checks run on Xen 4.17.
#include "arch/xen.h"
#include "arch/event_channel_ops.h"
#include "selftest/events/events_selftests.h"
#include "pv-kernel-patches/shared_info.h"

namespace kernel {
namespace {
using evtchn::bind_ipi;
using evtchn::close;
using evtchn::send;
constexpr unsigned kBits = sizeof(xen_ulong_t) * 8;

long status(evtchn_port_t port, evtchn_status_t& out) { return evtchn::status(DOMID_SELF, port, out); }
xen_ulong_t bit(evtchn_port_t port) { return xen_ulong_t{1} << (port % kBits); }
bool pending(evtchn_port_t port) {
  return __atomic_load_n(&shared_info()->evtchn_pending[port / kBits], __ATOMIC_SEQ_CST) & bit(port);
}
void set_mask(evtchn_port_t port, bool masked) {
  xen_ulong_t& word = shared_info()->evtchn_mask[port / kBits];
  if (masked)
    __atomic_fetch_or(&word, bit(port), __ATOMIC_SEQ_CST);
  else
    __atomic_fetch_and(&word, ~bit(port), __ATOMIC_SEQ_CST);
}
void clear_pending(evtchn_port_t port) {
  __atomic_fetch_and(&shared_info()->evtchn_pending[port / kBits], ~bit(port), __ATOMIC_SEQ_CST);
}
}  // namespace

void selftest_ipi(SelfTest& test) {
  evtchn_port_t ports[4] = {};
  bool distinct = true;
  for (unsigned i = 0; i < 4; ++i) {
    test.check("EVTCHNOP_bind_ipi on vCPU 0 works", bind_ipi(0, ports[i]), 0);
    for (unsigned j = 0; j < i; ++j) distinct = distinct && ports[j] != ports[i];
    distinct = distinct && ports[i] != 0 && ports[i] != 0xdead;
  }
  test.check("four IPI ports, each its own", distinct, true);
  evtchn_status_t s;
  test.check("EVTCHNOP_status of one works", status(ports[2], s), 0);
  test.check("  it is an IPI", s.status, EVTCHNSTAT_ipi);
  test.check("  of vCPU 0", s.vcpu, 0);

  for (evtchn_port_t port : ports) set_mask(port, true);
  test.check("the masked port is not pending", pending(ports[1]), false);
  test.check("EVTCHNOP_send on an IPI port works", send(ports[1]), 0);
  test.check("  and makes it pending for its vCPU", pending(ports[1]), true);
  test.check("  and no other", pending(ports[0]) || pending(ports[2]) || pending(ports[3]), false);
  test.check("a second send while pending works", send(ports[1]), 0);
  clear_pending(ports[1]);
  test.check("EVTCHNOP_send on each of the others works",
             send(ports[0]) == 0 && send(ports[2]) == 0 && send(ports[3]) == 0, true);
  test.check("  and each is pending", pending(ports[0]) && pending(ports[2]) && pending(ports[3]), true);
  for (evtchn_port_t port : ports) clear_pending(port);
  for (evtchn_port_t port : ports) set_mask(port, false);

  evtchn_port_t other = 0;
  test.check("EVTCHNOP_bind_ipi on vCPU 1 (not the domain's) is -ENOENT", bind_ipi(1, other), -XEN_ENOENT);
  test.check("EVTCHNOP_bind_ipi on vCPU 0xffffffff is -ENOENT", bind_ipi(0xffffffffu, other), -XEN_ENOENT);
  test.check("EVTCHNOP_bind_ipi with an unmapped request is -EFAULT",
             arch::hypercall(__HYPERVISOR_event_channel_op, EVTCHNOP_bind_ipi, 0xffff800000000000ull), -XEN_EFAULT);
  for (evtchn_port_t port : ports) test.check("EVTCHNOP_close of an IPI port works", close(port), 0);
  test.check("  and its status is closed", status(ports[3], s) == 0 && s.status == EVTCHNSTAT_closed, true);
  test.check("EVTCHNOP_send on the closed port is -EINVAL", send(ports[3]), -XEN_EINVAL);
}
}  // namespace kernel
