#pragma once
// 2-level event channels: the upcall scans its vCPU's evtchn_pending_sel, then the pending
// words it selects, and calls the handler bound to each pending, unmasked port the kernel
// bound to that vCPU (a port of another vCPU is left for that vCPU's upcall). After
// events_use_fifo (only selftest=evtchn-fifo switches: the kernel's own ABI is 2-level) the
// upcall drains the FIFO queues instead, as a FIFO guest does.
#include <stdint.h>

#include "arch/xen.h"

namespace kernel {

using EventHandler = void (*)(uint32_t port);

// Binds a virtual IRQ of vCPU 0 to a new port, installs the handler and unmasks the port.
uint32_t events_bind_virq(uint32_t virq, EventHandler handler);
// The same on vCPU `vcpu` (EVTCHNOP_bind_virq's vcpu), and an IPI port of `vcpu`
// (EVTCHNOP_bind_ipi): the hypercall's result, `port` set on success. The handler runs on that
// vCPU.
long events_bind_virq_on(uint32_t virq, unsigned vcpu, EventHandler handler, uint32_t& port);
long events_bind_ipi(unsigned vcpu, EventHandler handler, uint32_t& port);
// The kernel's record of which vCPU a port notifies, after EVTCHNOP_bind_vcpu moved it.
void events_set_vcpu(uint32_t port, unsigned vcpu);
// For ports bound elsewhere (the relay binds them for the host): installs `handler` and
// unmasks the port; false if the port is beyond the handler table.
bool events_attach(uint32_t port, EventHandler handler);
void events_detach(uint32_t port);  // no handler, masked
// The handler installed for `port` (null: none), so that one borrowing the port can give it back.
EventHandler events_handler(uint32_t port);
void events_mask(uint32_t port);
long events_unmask(uint32_t port);  // EVTCHNOP_unmask: an event pending meanwhile is delivered
void events_handle_upcall();
// From now on the domain's events arrive in the FIFO queues of `control` (the hypervisor
// accepted it with EVTCHNOP_init_control) with the words of `array` (ports 0..1023, the first
// page given with EVTCHNOP_expand_array). Masking then sets MASKED in the port's word.
void events_use_fifo(evtchn_fifo_control_block* control, event_word_t* array);
// The FIFO upcall's steps, for the self-test: the next port of queue `priority` with its
// word's LINKED cleared (0: none), and whether the queue still has more after it.
uint32_t events_fifo_take(unsigned priority, bool& more);
uint64_t events_delivered();

}  // namespace kernel
