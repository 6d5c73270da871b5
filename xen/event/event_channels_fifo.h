// The FIFO event-channel ABI's hypercalls and delivery (the rules are domain/event_fifo's):
// EVTCHNOP_init_control, expand_array and set_priority as Xen 4.17 answers them, and the
// switch of a domain's delivery from the 2-level bitmaps to its FIFO queues at init_control.
// Every guest frame the hypervisor writes for it (the control block's and each event array
// page) is held with a general and a writable type reference from the hypercall that gave it
// until the domain's event channels are torn down, so it can never become a page table or a
// descriptor page meanwhile (Xen's map_guest_page).
#pragma once
#include <stdint.h>

struct Domain;
struct Vcpu;

namespace event_channels_fifo {
// -EFAULT for an unreadable argument; -ENOENT for a vCPU the domain does not have; -EINVAL for
// a control block that leaves its page or is not 8-byte aligned, a second call for the same
// vCPU, a frame not the domain's or one that cannot be writable, or a dying domain. The first
// success switches the domain's events to its FIFO queues; each vCPU's events go to its own
// control block's queues (dropped for a vCPU without one, as Xen). link_bits (17) is written back.
long init_control(Vcpu& vcpu, uint64_t argument);
// -EOPNOTSUPP before init_control; -ENOSPC past Xen's 128 pages; -EINVAL for a frame as above.
long expand_array(Vcpu& vcpu, uint64_t argument);
// -EINVAL for a port that does not exist or a priority beyond EVTCHN_FIFO_PRIORITY_MIN;
// -ENOSYS under the 2-level ABI; -EACCES for a port not bound.
long set_priority(Vcpu& vcpu, uint64_t argument);

bool active(const Domain& domain);
// Delivery under FIFO (the caller checked active): the event linked on the port's notify
// vCPU, and that vCPU's upcall raised when its queue needs a look.
void set_pending(Domain& domain, unsigned port);
void unmask(Domain& domain, unsigned port);
// A port closed: its PENDING bit cleared, its priority back to the default for its next bind.
void port_closed(Domain& domain, unsigned port);
// Teardown: the frames given back, the domain back to the 2-level ABI's state.
void release(Domain& domain);
}  // namespace event_channels_fifo
