#include "domain_console/guest_console.h"
#include "abi/xen_abi.h"
#include <xen/io/console.h>
#include "console/console.h"
#include "console/guest_ring_reader.h"
#include "domain_console/console_output.h"
#include "domain/domain.h"
#include "domain/domain_mmu.h"
#include "event/event_channels.h"
#include "memory/boot_memory.h"
#include "memory/machine.h"

namespace guest_console {
namespace {
// The ring page, while the hypervisor holds it (from attach until the domain's teardown). The
// hold keeps the frame the domain's and plain writable memory even if the domain unmaps it,
// gives it back with decrease_reservation or tries to make it a page table or a descriptor
// frame: those are refused, as on Xen, where xenconsoled's writable mapping holds it.
xencons_interface* ring_of(Domain& domain) {
  if (!domain.console_ring.held) return nullptr;
  return machine::to_virtual<xencons_interface>(domain.console_ring.mfn << 12);
}
}  // namespace

int attach(Domain& domain, uint64_t mfn) {
  if (domain_mmu::take_write_hold(domain, domain.console_ring, mfn) != 0) return -XEN_EINVAL;
  int port = event_channels::bind_to_hypervisor(domain);
  if (port < 0) {
    detach(domain);
    return port;
  }
  __builtin_memset(machine::to_virtual(mfn << 12), 0, 4096);
  domain.console_port = evtchn_port_t(port);
  domain.console_out_cons = 0;
  return port;
}

void detach(Domain& domain) { domain_mmu::release_write_hold(domain.console_ring); }

void init() { event_channels::set_hypervisor_backend(notify); }

void notify(Domain& domain) {
  xencons_interface* ring = ring_of(domain);
  if (!ring) return;
  volatile xencons_interface* shared = ring;
  uint32_t producer = shared->out_prod;  // read once: the guest may change it meanwhile
  __atomic_thread_fence(__ATOMIC_ACQUIRE);
  char text[256];
  // At most the ring's size per notification: the guest cannot keep the hypervisor here.
  for (uint32_t drained = 0; drained < sizeof(ring->out);) {
    console::RingRead read =
        console::read_guest_ring(shared->out, sizeof(ring->out), domain.console_out_cons, producer, text, sizeof(text));
    if (read.inconsistent && console_output::may_report(domain))
      printk("d%u: console ring indexes inconsistent (producer %u, consumer %u): output skipped\n", domain.id, producer,
             domain.console_out_cons);
    domain.console_out_cons = read.consumer;
    console_output::write_guest_text(domain, text, read.length);
    drained += read.length;
    if (read.length < sizeof(text)) break;
  }
  __atomic_thread_fence(__ATOMIC_RELEASE);
  shared->out_cons = domain.console_out_cons;
  console_output::keep_draining();
}
}  // namespace guest_console
