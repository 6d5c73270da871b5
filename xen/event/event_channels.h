// 2-level event channels (the shared_info bitmaps) and the EVTCHNOP hypercalls this
// hypervisor serves: bind_virq (per-vCPU VIRQs on any vCPU, global ones on vCPU 0), bind_ipi,
// bind_vcpu, alloc_unbound, bind_interdomain, send (delivered to the remote end, or for an IPI
// port to its own vCPU: the pending bit, the upcall of the vCPU the port notifies, that vCPU
// woken if blocked), unmask, close (the remote end of an interdomain channel becomes unbound
// again), status. The rules on one domain's table are pure
// (domain/event_channel_table); this is the glue: domain lookup, Xen's default XSM policy
// (XSM_TARGET: the domain itself or the control domain), guest copies and delivery.
#pragma once
#include <stdint.h>

struct Domain;
struct Vcpu;

namespace event_channels {
// At boot: tells the floors below which events their happenings raise (a vCPU timer that is
// due sends VIRQ_TIMER, a domain that stops raises VIRQ_DOM_EXC, the trace buffers' consumer
// is woken with VIRQ_TBUF).
void init();
// Marks `port` pending and, unless masked, raises the upcall of the vCPU the port notifies.
void set_pending(Domain& domain, unsigned port);
// Xen's evtchn_port_poll: -EINVAL for a port beyond the domain's, else whether it is pending.
long port_poll(Domain& domain, unsigned port);
// Xen's evtchn_check_pollers, for a port that just became pending: wakes each vCPU polling it
// (or polling any port) with SCHEDOP_poll.
void check_pollers(Domain& domain, unsigned port);
// A VIRQ bound on `vcpu` (a per-vCPU VIRQ of its own, or a global one: vCPU 0's binding).
void send_virq(Vcpu& vcpu, unsigned virq);
// VIRQ_DOM_EXC to dom0 (Xen's send_global_virq): a domain shut down, crashed or died.
void raise_domain_exception();
// A port of `domain` connected to a backend the hypervisor serves (the console ring of a
// domain built at boot): the port, or a negative Xen errno.
int bind_to_hypervisor(Domain& domain);
// What a notification on such a port runs: the backend (domain_console/guest_console, a floor
// above the event channels) says so at boot.
using HypervisorBackend = void (*)(Domain& domain);
void set_hypervisor_backend(HypervisorBackend notified);
// How many ports of `domain` are in use (for the tests' before/after counts and the reports).
unsigned ports_in_use(Domain& domain);
long hypercall(Vcpu& vcpu, int command, uint64_t argument);
// Closes every port of the domain (destroydomain: Xen's evtchn_destroy).
void close_all(Domain& domain);
}  // namespace event_channels
