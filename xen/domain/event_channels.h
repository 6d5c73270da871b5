// 2-level event channels (the shared_info bitmaps) and the EVTCHNOP hypercalls this
// hypervisor serves: bind_virq, send (to a local VIRQ port), unmask, close, status.
#pragma once
#include <stdint.h>

struct Domain;
struct Vcpu;

namespace event_channels {
// Marks `port` pending and, unless masked, raises the vCPU's upcall.
void set_pending(Domain& domain, unsigned port);
void send_virq(Vcpu& vcpu, unsigned virq);
long hypercall(Vcpu& vcpu, int command, uint64_t argument);
// Closes every port of the domain (destroydomain: Xen's evtchn_destroy).
void close_all(Domain& domain);
}  // namespace event_channels
