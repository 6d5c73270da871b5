#include "event/event_channels_fifo.h"
#include "event/event_channels.h"
#include "abi/xen_abi.h"
#include <xen/errno.h>
#include <xen/event_channel.h>
#include <xen/xen.h>
#include "domain/domain.h"
#include "domain/domain_mmu.h"
#include "domain/event_fifo.h"
#include "sched/scheduler.h"
#include "memory/boot_memory.h"
#include "memory/machine.h"
#include "mm/page_refs.h"
#include "domain/guest_memory.h"

namespace event_channels_fifo {
namespace {
// Xen's vcpu_mark_events_pending: the FIFO ABI uses only the upcall flag of the vcpu_info
// (the guest reads the control block's READY word, not the 2-level selector).
void raise_upcall(Vcpu& vcpu) {
  __atomic_store_n(&vcpu.info()->evtchn_upcall_pending, 1, __ATOMIC_SEQ_CST);
  scheduler::wake(vcpu);
}

// A frame of the domain the hypervisor will write for as long as the FIFO state holds it: the
// write hold of every such frame (domain_mmu::take_write_hold), as Xen's map_guest_page (a PV
// guest's gfn is its mfn). The FIFO state keeps the frame number; release() gives the pair
// back. -EINVAL for a frame not the domain's, or one that is a page table or descriptor page.
int hold_writable(Domain& domain, uint64_t mfn) {
  mm::GuestFrameWriteRef hold;
  return domain_mmu::take_write_hold(domain, hold, mfn);
}

uint8_t* machine_memory() { return machine::to_virtual<uint8_t>(0); }

// The vCPU a port's events go to (Xen's notify_vcpu_id): bind_virq, bind_ipi and bind_vcpu
// set it, vCPU 0 otherwise.
unsigned notify_vcpu(const Domain& domain, unsigned port) {
  const unsigned vcpu = port < Domain::max_event_channels ? domain.event_channels[port].vcpu : 0;
  return vcpu < Domain::vcpu_capacity ? vcpu : 0;
}
unsigned notify_vcpu_of(const void* domain, unsigned port) {
  return notify_vcpu(*static_cast<const Domain*>(domain), port);
}

// Each vCPU named in `vcpus` (one bit each) gets its upcall.
void raise_upcalls(Domain& domain, uint32_t vcpus) {
  for (unsigned id = 0; vcpus; ++id, vcpus >>= 1)
    if (vcpus & 1) raise_upcall(domain.vcpus[id]);
}
}  // namespace

bool active(const Domain& domain) { return domain.fifo.active; }

long init_control(Vcpu& vcpu, uint64_t argument) {
  evtchn_init_control_t request;
  if (!guest_memory::read(vcpu, argument, request)) return -XEN_EFAULT;
  request.link_bits = EVTCHN_FIFO_LINK_BITS;
  Domain& domain = *vcpu.domain;
  if (!domain.vcpu(request.vcpu)) return -XEN_ENOENT;  // Xen's domain_vcpu
  if (const int rc = evtchn_fifo::check_control_offset(request.offset)) return rc;
  if (domain.dying() || !domain.shared_info) return -XEN_EINVAL;
  // The first control block switches the domain to FIFO; each vCPU may give one, once.
  if (evtchn_fifo::has_control_block(domain.fifo, request.vcpu)) return -XEN_EINVAL;
  if (const int rc = hold_writable(domain, request.control_gfn)) return rc;
  if (domain.fifo.active)
    evtchn_fifo::add_control_block(domain.fifo, request.vcpu, request.control_gfn, request.offset);
  else
    evtchn_fifo::start(domain.fifo, machine_memory(), request.control_gfn, request.offset,
                       domain.shared_info->evtchn_pending, domain.valid_event_channels, request.vcpu);
  return guest_memory::write(vcpu, argument, request) ? 0 : -XEN_EFAULT;
}

long expand_array(Vcpu& vcpu, uint64_t argument) {
  evtchn_expand_array_t request;
  if (!guest_memory::read(vcpu, argument, request)) return -XEN_EFAULT;
  Domain& domain = *vcpu.domain;
  if (!domain.fifo.active) return -XEN_EOPNOTSUPP;
  if (domain.dying()) return -XEN_EINVAL;
  if (const int rc = evtchn_fifo::check_room_for_page(domain.fifo)) return rc;
  if (const int rc = hold_writable(domain, request.array_gfn)) return rc;
  raise_upcalls(domain, evtchn_fifo::add_array_page(domain.fifo, request.array_gfn, notify_vcpu_of, &domain));
  return 0;
}

// Xen's evtchn_set_priority: the port must exist (-EINVAL), the ABI have priorities (-ENOSYS),
// the port be bound (-EACCES: port 0 and free ports are not), the priority be one of the 16.
long set_priority(Vcpu& vcpu, uint64_t argument) {
  evtchn_set_priority_t request;
  if (!guest_memory::read(vcpu, argument, request)) return -XEN_EFAULT;
  Domain& domain = *vcpu.domain;
  const evtchn::Table table = domain.channel_table();
  if (!table.valid(request.port)) return -XEN_EINVAL;
  if (!domain.fifo.active) return -XEN_ENOSYS;
  if (!table.in_use(request.port)) return -XEN_EACCES;
  return evtchn_fifo::set_priority(domain.fifo, request.port, request.priority);
}

void set_pending(Domain& domain, unsigned port) {
  const unsigned vcpu = notify_vcpu(domain, port);
  const bool was_pending = evtchn_fifo::is_pending(domain.fifo, port);
  if (evtchn_fifo::set_pending(domain.fifo, port, vcpu)) raise_upcall(domain.vcpus[vcpu]);
  // As Xen's FIFO set_pending: a port that became pending wakes its pollers, masked or not.
  if (!was_pending && evtchn_fifo::is_pending(domain.fifo, port)) event_channels::check_pollers(domain, port);
}

void unmask(Domain& domain, unsigned port) {
  const unsigned vcpu = notify_vcpu(domain, port);
  if (evtchn_fifo::unmask(domain.fifo, port, vcpu)) raise_upcall(domain.vcpus[vcpu]);
}

void port_closed(Domain& domain, unsigned port) {
  evtchn_fifo::clear_pending(domain.fifo, port);
  evtchn_fifo::reset_port(domain.fifo, port);
}

void release(Domain& domain) {
  mm::FrameTable& frames = boot_memory::frame_table();
  evtchn_fifo::for_each_frame(domain.fifo, [&](uint64_t mfn) { mm::put_page_and_type(frames, mfn); });
  evtchn_fifo::stop(domain.fifo);
}
}  // namespace event_channels_fifo
