// The PV console of a domain built at boot: a page of its own memory holding a
// xencons_interface (start_info->console.domU.mfn) and a port connected to the hypervisor
// (console.domU.evtchn). When the domain notifies the port, the hypervisor drains the ring's
// `out` half and prints the text as "(dN) " lines, as console_io does for it; until a
// toolstack's console daemon exists, the hypervisor is the backend. A ring the guest filled
// with garbage (a producer index far ahead) costs it its output, never more: each notification
// reads at most the ring's size, always inside the page (console/guest_ring_reader).
#pragma once
#include <stdint.h>

struct Domain;

namespace guest_console {
// At boot: the event channels run notify() when a domain notifies its console port.
void init();
// Gives `domain` the console ring in its frame `mfn` (zeroed here) and a port to notify;
// the port, or a negative Xen errno (-EINVAL: the frame is not the domain's, or is a page
// table or a descriptor frame). The hypervisor holds the frame as plain writable memory
// (mm::GuestFrameWriteRef) from here until detach: it stores into the ring on every
// notification, and a frame that became a page table would take those stores as entries.
int attach(Domain& domain, uint64_t mfn);
// The domain is being torn down: the hold on the ring's frame goes (the port is closed with
// the others); notifications are ignored from now on.
void detach(Domain& domain);
// The domain notified its console port.
void notify(Domain& domain);
}  // namespace guest_console
