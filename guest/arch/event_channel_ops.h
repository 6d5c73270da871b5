#pragma once
// The event-channel hypercalls as one-line calls: each fills its request structure from the
// arguments, makes EVTCHNOP_*, hands back the port the hypervisor chose (where there is one)
// and returns the hypercall's result. Kernel code and self-tests share them; the self-tests
// pass values Xen must refuse through the same calls.
#include "arch/xen.h"

namespace kernel::evtchn {

inline long send(evtchn_port_t port) {
  evtchn_send_t request{port};
  return xen::event_channel_op(EVTCHNOP_send, &request);
}

inline long close(evtchn_port_t port) {
  evtchn_close_t request{port};
  return xen::event_channel_op(EVTCHNOP_close, &request);
}

inline long status(domid_t dom, evtchn_port_t port, evtchn_status_t& out) {
  out = evtchn_status_t{};
  out.dom = dom;
  out.port = port;
  return xen::event_channel_op(EVTCHNOP_status, &out);
}

inline long alloc_unbound(domid_t dom, domid_t remote, evtchn_port_t& port) {
  evtchn_alloc_unbound_t request{};
  request.dom = dom;
  request.remote_dom = remote;
  const long rc = xen::event_channel_op(EVTCHNOP_alloc_unbound, &request);
  port = request.port;
  return rc;
}

inline long bind_interdomain(domid_t remote, evtchn_port_t remote_port, evtchn_port_t& local) {
  evtchn_bind_interdomain_t request{};
  request.remote_dom = remote;
  request.remote_port = remote_port;
  const long rc = xen::event_channel_op(EVTCHNOP_bind_interdomain, &request);
  local = request.local_port;
  return rc;
}

// `port` is preset to a value no port has, so a caller can see whether it was written.
inline long bind_ipi(uint32_t vcpu, evtchn_port_t& port) {
  evtchn_bind_ipi_t request{};
  request.vcpu = vcpu;
  request.port = 0xdead;
  const long rc = xen::event_channel_op(EVTCHNOP_bind_ipi, &request);
  port = request.port;
  return rc;
}

}  // namespace kernel::evtchn
