// One domain's 2-level event channels as a table of ports, and the rules of Xen 4.17's
// EVTCHNOP_alloc_unbound, bind_interdomain, bind_ipi, close and status on them (xen/common/event_channel.c).
// Pure: no domain lookup, no guest memory, no delivery; the glue (event/event_channels) finds
// the domains, checks privilege, copies the requests and raises the events. Unit-tested on the
// host (tests/unit/domain_event_channel_table_test.cpp).
#pragma once
#include <stdint.h>
#include "abi/xen_abi.h"
#include <xen/xen.h>
#include <xen/event_channel.h>

namespace evtchn {

struct Channel {
  // free: closed (port 0 is reserved and never leaves this state); unbound: waits for
  // `remote_domain` to bind (Xen's ECS_UNBOUND); interdomain: connected to `remote_port` of
  // `remote_domain`; virq: a virtual IRQ of `vcpu`; hypervisor: connected to a backend the
  // hypervisor itself serves (the console of a domain built at boot), remote_domain DOMID_XEN.
  // ipi: notifies `vcpu` of its own domain (EVTCHNOP_bind_ipi, Xen's ECS_IPI).
  // `vcpu` is Xen's notify_vcpu_id for every state: the vCPU the port's events go to (0 until
  // bind_virq, bind_ipi or bind_vcpu say otherwise, and again once the port is closed).
  enum class State : uint8_t { free, virq, interdomain, unbound, hypervisor, ipi } state = State::free;
  uint32_t virq = 0;
  uint32_t vcpu = 0;
  domid_t remote_domain = 0;
  evtchn_port_t remote_port = 0;
};

// Xen 4.17 keeps a domain's ports in buckets of 64 (EVTCHNS_PER_BUCKET with the 2-level ABI on
// x86-64), allocates the first when the domain is created and another only when no port of
// those it has is free, and frees none before the domain goes. A port beyond the buckets does
// not exist: EVTCHNOP_status, bind_interdomain, close, send and unmask answer -EINVAL for it.
inline constexpr unsigned kPortsPerBucket = 64;
constexpr unsigned first_bucket_end(unsigned capacity) {
  return capacity < kPortsPerBucket ? capacity : kPortsPerBucket;
}

// A domain's ports 0 .. capacity-1, of which 0 .. *valid_end-1 exist (the buckets allocated:
// first_bucket_end(capacity) at creation, growing by a bucket, never past capacity). Port 0
// is never allocated (Xen reserves it).
struct Table {
  Channel* ports;
  unsigned capacity;
  domid_t owner;
  unsigned* valid_end;
  bool dying = false;  // the owner is being destroyed: no port is allocated in it (-EINVAL)

  bool valid(evtchn_port_t port) const { return port < *valid_end; }
  bool in_use(evtchn_port_t port) const { return port > 0 && valid(port) && ports[port].state != Channel::State::free; }
  // Lowest free port (Xen's get_free_port), a new bucket's first when the existing ones are
  // full, or -ENOSPC; -EINVAL in a dying domain's table.
  int allocate();
  unsigned count_in_use() const;
};

// EVTCHNOP_alloc_unbound in `table` for `remote` (already resolved: DOMID_SELF is the caller's
// id). The port, or -ENOSPC.
int alloc_unbound(Table& table, domid_t remote);

// EVTCHNOP_bind_ipi for `vcpu` (the glue checked it exists): the port, or -ENOSPC.
int bind_ipi(Table& table, uint32_t vcpu);

// Xen's virq_is_global: every VIRQ but the per-vCPU ones (VIRQ_TIMER, VIRQ_DEBUG,
// VIRQ_XENOPROF, VIRQ_XENPMU; on x86 the arch VIRQs are global too). A global VIRQ is bound on
// vCPU 0 only and is delivered to whichever vCPU its port notifies.
bool virq_is_global(uint32_t virq);

// EVTCHNOP_bind_vcpu on `port` of `table` (the glue checked the vCPU exists, else -ENOENT):
// from now on the port notifies `vcpu`. As Xen 4.17's evtchn_bind_vcpu: -EINVAL for a port
// beyond the buckets, one the hypervisor serves, a free one (port 0 too), an IPI port and a
// per-vCPU VIRQ's; unbound, interdomain and global VIRQ ports move.
int bind_vcpu(Table& table, evtchn_port_t port, uint32_t vcpu);

// A port connected to a backend the hypervisor serves (State::hypervisor, remote DOMID_XEN):
// the port, or -ENOSPC.
int bind_to_hypervisor(Table& table);

// EVTCHNOP_bind_interdomain: connects a new port of `local` to `remote_port` of `remote`, which
// must be unbound and waiting for `local` (-EINVAL otherwise, also for a port out of range).
// `local` and `remote` may be the same table (a domain binding to itself, which Xen allows).
// A dying remote is -EINVAL too (its ports are closed or about to be).
// The new local port, or the error; on error nothing changed.
int bind_interdomain(Table& local, Table& remote, evtchn_port_t remote_port);

// What EVTCHNOP_close did besides freeing the port: the remote end of an interdomain channel
// is left unbound, waiting for the closer again (as Xen), and its domain is reported so the
// glue can find it. A virq port's binding must be cleared by the glue (it owns the vCPU's
// virq table).
struct CloseResult {
  int error = 0;     // -EINVAL: port out of range, port 0 or free
  Channel closed{};  // the channel as it was
};
// `remote_of` finds another domain's table by id (null: gone); the remote end of an
// interdomain channel to the same domain is in `table` itself.
CloseResult close(Table& table, evtchn_port_t port, Table* (*remote_of)(domid_t));

// EVTCHNOP_status fields for a port of `table` (the caller checked the domain and privilege):
// -EINVAL out of range; closed for free ports and port 0.
int status(const Table& table, evtchn_port_t port, evtchn_status_t& out);

}  // namespace evtchn
