#include "domain/guest_console.h"
#include "mm/xen_abi.h"
#include <xen/io/console.h>
#include "console/console.h"
#include "console/guest_ring_reader.h"
#include "domain/console_output.h"
#include "domain/domain.h"
#include "domain/event_channels.h"
#include "hypercall/console_io.h"
#include "memory/boot_memory.h"
#include "memory/machine.h"

namespace guest_console {
namespace {
// The ring page, while the domain still owns its frame (it may have given it back with
// decrease_reservation: the hypervisor then stops reading it).
xencons_interface* ring_of(Domain& domain) {
  if (!domain.console_mfn) return nullptr;
  const mm::PageInfo* info = boot_memory::frame_table().find(domain.console_mfn);
  if (!info || info->is_free() || info->owner != domain.id) {
    printk("d%u: console ring frame %lx is no longer the domain's: its console is closed\n", domain.id,
           domain.console_mfn);
    domain.console_mfn = 0;
    return nullptr;
  }
  return machine::to_virtual<xencons_interface>(domain.console_mfn << 12);
}
}  // namespace

int attach(Domain& domain, uint64_t mfn) {
  int port = event_channels::bind_to_hypervisor(domain);
  if (port < 0) return port;
  __builtin_memset(machine::to_virtual(mfn << 12), 0, 4096);
  domain.console_mfn = mfn;
  domain.console_port = evtchn_port_t(port);
  domain.console_out_cons = 0;
  return port;
}

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
    hypercall::write_guest_text(domain, text, read.length);
    drained += read.length;
    if (read.length < sizeof(text)) break;
  }
  __atomic_thread_fence(__ATOMIC_RELEASE);
  shared->out_cons = domain.console_out_cons;
  console_output::keep_draining();
}
}  // namespace guest_console
