#include "domain/event_channel_table.h"
#include <xen/errno.h>

namespace evtchn {
using State = Channel::State;

int Table::allocate() {
  if (dying) return -XEN_EINVAL;  // Xen's get_free_port
  unsigned port = 1;
  for (; port < *valid_end; ++port)
    if (ports[port].state == State::free) return int(port);
  if (port >= capacity) return -XEN_ENOSPC;
  const unsigned grown = port + kPortsPerBucket;
  *valid_end = grown < capacity ? grown : capacity;
  return int(port);
}

unsigned Table::count_in_use() const {
  unsigned count = 0;
  for (unsigned port = 1; port < *valid_end; ++port) count += ports[port].state != State::free;
  return count;
}

namespace {
int take_port(Table& table, State state, domid_t remote) {
  int port = table.allocate();
  if (port < 0) return port;
  Channel& channel = table.ports[port];
  channel = Channel{};
  channel.state = state;
  channel.remote_domain = remote;
  return port;
}
}  // namespace

int alloc_unbound(Table& table, domid_t remote) { return take_port(table, State::unbound, remote); }
int bind_to_hypervisor(Table& table) { return take_port(table, State::hypervisor, DOMID_XEN); }
int bind_ipi(Table& table, uint32_t vcpu) {
  const int port = take_port(table, State::ipi, 0);
  if (port > 0) table.ports[port].vcpu = vcpu;
  return port;
}

bool virq_is_global(uint32_t virq) {
  switch (virq) {
    case VIRQ_TIMER:
    case VIRQ_DEBUG:
    case VIRQ_XENOPROF:
    case VIRQ_XENPMU: return false;
    default: return true;
  }
}

int bind_vcpu(Table& table, evtchn_port_t port, uint32_t vcpu) {
  if (!table.valid(port)) return -XEN_EINVAL;
  Channel& channel = table.ports[port];
  switch (port == 0 ? State::free : channel.state) {
    case State::virq:
      if (!virq_is_global(channel.virq)) return -XEN_EINVAL;
      channel.vcpu = vcpu;
      return 0;
    case State::unbound:
    case State::interdomain: channel.vcpu = vcpu; return 0;
    case State::free:
    case State::hypervisor:  // Xen: a Xen-attached channel cannot be re-bound
    case State::ipi: return -XEN_EINVAL;
  }
  return -XEN_EINVAL;
}

int bind_interdomain(Table& local, Table& remote, evtchn_port_t remote_port) {
  int port = local.allocate();
  if (port < 0) return port;
  if (remote.dying || !remote.valid(remote_port)) return -XEN_EINVAL;
  Channel& theirs = remote.ports[remote_port];
  if (theirs.state != State::unbound || theirs.remote_domain != local.owner) return -XEN_EINVAL;
  Channel& ours = local.ports[port];
  ours = Channel{};
  ours.state = State::interdomain;
  ours.remote_domain = remote.owner;
  ours.remote_port = remote_port;
  theirs.state = State::interdomain;
  theirs.remote_domain = local.owner;
  theirs.remote_port = evtchn_port_t(port);
  return port;
}

CloseResult close(Table& table, evtchn_port_t port, Table* (*remote_of)(domid_t)) {
  CloseResult result;
  if (!table.in_use(port)) {
    result.error = -XEN_EINVAL;
    return result;
  }
  Channel& channel = table.ports[port];
  result.closed = channel;
  if (channel.state == State::interdomain) {
    Table* remote = channel.remote_domain == table.owner ? &table : remote_of(channel.remote_domain);
    if (remote && remote->valid(channel.remote_port)) {
      Channel& theirs = remote->ports[channel.remote_port];
      if (theirs.state == State::interdomain && theirs.remote_domain == table.owner && theirs.remote_port == port) {
        theirs.state = State::unbound;
        theirs.remote_domain = table.owner;
        theirs.remote_port = 0;
      }
    }
  }
  channel = Channel{};
  return result;
}

int status(const Table& table, evtchn_port_t port, evtchn_status_t& out) {
  if (!table.valid(port)) return -XEN_EINVAL;
  const Channel& channel = table.ports[port];
  out.vcpu = channel.vcpu;
  switch (port == 0 ? State::free : channel.state) {
    case State::free: out.status = EVTCHNSTAT_closed; break;
    case State::unbound:
      out.status = EVTCHNSTAT_unbound;
      out.u.unbound.dom = channel.remote_domain;
      break;
    case State::interdomain:
    case State::hypervisor:
      out.status = EVTCHNSTAT_interdomain;
      out.u.interdomain.dom = channel.remote_domain;
      out.u.interdomain.port = channel.remote_port;
      break;
    case State::virq:
      out.status = EVTCHNSTAT_virq;
      out.u.virq = channel.virq;
      break;
    case State::ipi: out.status = EVTCHNSTAT_ipi; break;
  }
  return 0;
}

}  // namespace evtchn
