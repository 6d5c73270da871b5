#pragma once
// 2-level event channels: the upcall scans evtchn_pending_sel, then the pending words it
// selects, and calls the handler bound to each pending, unmasked port.
#include <stdint.h>

namespace kernel {

using EventHandler = void (*)(uint32_t port);

// Binds a virtual IRQ of vCPU 0 to a new port, installs the handler and unmasks the port.
uint32_t events_bind_virq(uint32_t virq, EventHandler handler);
// For ports bound elsewhere (the relay binds them for the host): installs `handler` and
// unmasks the port; false if the port is beyond the handler table.
bool events_attach(uint32_t port, EventHandler handler);
void events_detach(uint32_t port);  // no handler, masked
// The handler installed for `port` (null: none), so that one borrowing the port can give it back.
EventHandler events_handler(uint32_t port);
void events_mask(uint32_t port);
long events_unmask(uint32_t port);  // EVTCHNOP_unmask: an event pending meanwhile is delivered
void events_handle_upcall();
uint64_t events_delivered();

}  // namespace kernel
