#include "event/event_channels.h"
#include "abi/xen_abi.h"
#include <xen/errno.h>
#include <xen/event_channel.h>
#include <xen/xen.h>
#include "domain/domain.h"
#include "domain/event_channel_table.h"
#include "domain/event_fifo.h"
#include "event/event_channels_fifo.h"
#include "sched/scheduler.h"
#include "sched/timers.h"
#include "domain/guest_memory.h"
#include "tracing/trace_buffers.h"

namespace event_channels {
namespace {
HypervisorBackend hypervisor_backend;

using Channel = Domain::EventChannel;
using State = Channel::State;
constexpr unsigned bits_per_word = 64;

// The bitmaps live in guest memory (shared_info, vcpu_info), which the guest's vCPUs change at
// the same time on other CPUs (sched_smp=1) with locked instructions: every change here is an
// atomic read-modify-write too (Xen's guest_test_and_set_bit), or a bit the guest cleared or set
// meanwhile would be lost, and with it an event.
bool test_and_set(xen_ulong_t* words, unsigned bit) {
  xen_ulong_t mask = xen_ulong_t(1) << (bit % bits_per_word);
  return __atomic_fetch_or(&words[bit / bits_per_word], mask, __ATOMIC_SEQ_CST) & mask;
}
bool test(const xen_ulong_t* words, unsigned bit) {
  return __atomic_load_n(&words[bit / bits_per_word], __ATOMIC_SEQ_CST) & (xen_ulong_t(1) << (bit % bits_per_word));
}
void clear(xen_ulong_t* words, unsigned bit) {
  __atomic_fetch_and(&words[bit / bits_per_word], ~(xen_ulong_t(1) << (bit % bits_per_word)), __ATOMIC_SEQ_CST);
}

void raise_upcall(Vcpu& vcpu, unsigned port) {
  vcpu_info_t* info = vcpu.info();
  test_and_set(&info->evtchn_pending_sel, port / bits_per_word);
  __atomic_store_n(&info->evtchn_upcall_pending, 1, __ATOMIC_SEQ_CST);
  scheduler::wake(vcpu);
}

// Xen's rcu_lock_domain_by_any_id: DOMID_SELF is the caller.
Domain* by_any_id(Vcpu& vcpu, domid_t id) { return id == DOMID_SELF ? vcpu.domain : domains::find(id); }

// Xen's default policy for XSM_TARGET: a domain may act on itself; the control domain on any.
bool may_target(const Vcpu& vcpu, const Domain& target) { return vcpu.domain == &target || vcpu.domain->privileged; }

// The table of another domain, for evtchn::close (which needs a pointer that outlives the call).
evtchn::Table* table_of(domid_t id) {
  static evtchn::Table found;
  Domain* domain = domains::find(id);
  if (!domain) return nullptr;
  found = domain->channel_table();
  return &found;
}

// The vCPU a port's events go to (Xen's notify_vcpu_id; vCPU 0 for a port out of range).
Vcpu& notify_vcpu(Domain& domain, unsigned port) {
  const unsigned id = port < Domain::max_event_channels ? domain.event_channels[port].vcpu : 0;
  return domain.vcpus[id < Domain::vcpu_capacity ? id : 0];
}

// Xen's evtchn_bind_virq: a VIRQ of one of the caller's vCPUs. A global VIRQ only on vCPU 0
// (-EINVAL), a vCPU the domain does not have -ENOENT, a VIRQ that vCPU has bound -EEXIST.
long bind_virq(Vcpu& vcpu, uint64_t argument) {
  evtchn_bind_virq_t bind;
  if (!guest_memory::read(vcpu, argument, bind)) return -XEN_EFAULT;
  if (bind.virq >= NR_VIRQS) return -XEN_EINVAL;
  if (evtchn::virq_is_global(bind.virq) && bind.vcpu != 0) return -XEN_EINVAL;
  Vcpu* target = vcpu.domain->vcpu(bind.vcpu);
  if (!target) return -XEN_ENOENT;
  if (target->virq_to_port[bind.virq]) return -XEN_EEXIST;
  int port = vcpu.domain->channel_table().allocate();
  if (port < 0) return port;
  Channel& channel = vcpu.domain->event_channels[port];
  channel = Channel{};
  channel.state = State::virq;
  channel.virq = bind.virq;
  channel.vcpu = bind.vcpu;
  target->virq_to_port[bind.virq] = unsigned(port);
  bind.port = evtchn_port_t(port);
  if (!guest_memory::write(vcpu, argument, bind)) return -XEN_EFAULT;
  return 0;
}

// Xen's evtchn_bind_ipi: a port of the caller that notifies one of its vCPUs (-ENOENT for a
// vCPU it does not have), delivered by EVTCHNOP_send.
long bind_ipi(Vcpu& vcpu, uint64_t argument) {
  evtchn_bind_ipi_t bind;
  if (!guest_memory::read(vcpu, argument, bind)) return -XEN_EFAULT;
  if (!vcpu.domain->vcpu(bind.vcpu)) return -XEN_ENOENT;
  evtchn::Table table = vcpu.domain->channel_table();
  const int port = evtchn::bind_ipi(table, bind.vcpu);
  if (port < 0) return port;
  bind.port = evtchn_port_t(port);
  return guest_memory::write(vcpu, argument, bind) ? 0 : -XEN_EFAULT;
}

// Xen's evtchn_alloc_unbound: a port of `dom` (the caller's, or any for the control domain)
// that `remote_dom` may bind; DOMID_SELF as the remote is the caller.
long alloc_unbound(Vcpu& vcpu, uint64_t argument) {
  evtchn_alloc_unbound_t alloc;
  if (!guest_memory::read(vcpu, argument, alloc)) return -XEN_EFAULT;
  Domain* domain = by_any_id(vcpu, alloc.dom);
  if (!domain) return -XEN_ESRCH;
  if (!may_target(vcpu, *domain)) return -XEN_EPERM;
  domid_t remote = alloc.remote_dom == DOMID_SELF ? vcpu.domain->id : alloc.remote_dom;
  evtchn::Table table = domain->channel_table();
  int port = evtchn::alloc_unbound(table, remote);
  if (port < 0) return port;
  alloc.port = evtchn_port_t(port);
  return guest_memory::write(vcpu, argument, alloc) ? 0 : -XEN_EFAULT;
}

// Xen's evtchn_bind_interdomain: connects a new port of the caller to an unbound port of
// `remote_dom` that waits for the caller. As Xen, the new port is marked pending at once (a
// notification sent to the unbound end before may have been lost).
long bind_interdomain(Vcpu& vcpu, uint64_t argument) {
  evtchn_bind_interdomain_t bind;
  if (!guest_memory::read(vcpu, argument, bind)) return -XEN_EFAULT;
  Domain& local = *vcpu.domain;
  Domain* remote = domains::find(bind.remote_dom == DOMID_SELF ? local.id : bind.remote_dom);
  if (!remote) return -XEN_ESRCH;
  evtchn::Table ours = local.channel_table(), theirs = remote->channel_table();
  int port = evtchn::bind_interdomain(ours, theirs, bind.remote_port);
  if (port < 0) return port;
  set_pending(local, unsigned(port));
  bind.local_port = evtchn_port_t(port);
  return guest_memory::write(vcpu, argument, bind) ? 0 : -XEN_EFAULT;
}

// Xen's evtchn_bind_vcpu: the vCPU first (-ENOENT), then the port's rules (domain/event_channel_table).
long bind_vcpu(Vcpu& vcpu, uint64_t argument) {
  evtchn_bind_vcpu_t bind;
  if (!guest_memory::read(vcpu, argument, bind)) return -XEN_EFAULT;
  if (!vcpu.domain->vcpu(bind.vcpu)) return -XEN_ENOENT;
  evtchn::Table table = vcpu.domain->channel_table();
  return evtchn::bind_vcpu(table, bind.port, bind.vcpu);
}

// A pending event of an unmasked port raises the upcall of the vCPU the port notifies.
long unmask(Vcpu& vcpu, uint64_t argument) {
  evtchn_unmask_t request;
  if (!guest_memory::read(vcpu, argument, request)) return -XEN_EFAULT;
  Domain& domain = *vcpu.domain;
  if (!domain.channel_table().in_use(request.port)) return -XEN_EINVAL;
  if (event_channels_fifo::active(domain)) {
    event_channels_fifo::unmask(domain, request.port);
    return 0;
  }
  shared_info_t* shared = domain.shared_info;
  clear(shared->evtchn_mask, request.port);
  if (test(shared->evtchn_pending, request.port)) raise_upcall(notify_vcpu(domain, request.port), request.port);
  return 0;
}

// A VIRQ port's binding goes with it: a global VIRQ's is vCPU 0's (whichever vCPU it notifies),
// a per-vCPU VIRQ's its own vCPU's.
void unbind_virq(Domain& domain, const Channel& closed) {
  if (closed.state != State::virq || closed.virq >= NR_VIRQS) return;
  const unsigned id = evtchn::virq_is_global(closed.virq) || closed.vcpu >= Domain::vcpu_capacity ? 0 : closed.vcpu;
  domain.vcpus[id].virq_to_port[closed.virq] = 0;
}

// A closed port's pending event goes with it, in whichever ABI the domain uses.
void forget_pending(Domain& domain, unsigned port) {
  if (event_channels_fifo::active(domain))
    event_channels_fifo::port_closed(domain, port);
  else if (domain.shared_info)
    clear(domain.shared_info->evtchn_pending, port);
}

// Xen's evtchn_close: a free port (or 0) is -EINVAL; the pending bit goes with the port.
long close(Vcpu& vcpu, uint64_t argument) {
  evtchn_close_t request;
  if (!guest_memory::read(vcpu, argument, request)) return -XEN_EFAULT;
  Domain& domain = *vcpu.domain;
  evtchn::Table table = domain.channel_table();
  evtchn::CloseResult result = evtchn::close(table, request.port, table_of);
  if (result.error) return result.error;
  unbind_virq(domain, result.closed);
  if (result.closed.state == State::hypervisor && domain.console_port == request.port) domain.console_port = 0;
  forget_pending(domain, request.port);
  return 0;
}

// Xen's evtchn_send: an interdomain port notifies the remote end, an IPI port its vCPU, an
// unbound one drops the notification silently; any other kind of port (a VIRQ's) is -EINVAL.
long send(Vcpu& vcpu, uint64_t argument) {
  evtchn_send_t request;
  if (!guest_memory::read(vcpu, argument, request)) return -XEN_EFAULT;
  Domain& domain = *vcpu.domain;
  if (!domain.channel_table().in_use(request.port)) return -XEN_EINVAL;
  const Channel& channel = domain.event_channels[request.port];
  switch (channel.state) {
    case State::interdomain:
      if (Domain* remote = domains::find(channel.remote_domain)) set_pending(*remote, channel.remote_port);
      return 0;
    case State::hypervisor: hypervisor_backend(domain); return 0;
    case State::ipi: set_pending(domain, request.port); return 0;  // to the vCPU it notifies
    case State::unbound: return 0;
    default: return -XEN_EINVAL;
  }
}

// Xen's evtchn_status: the domain (-ESRCH), the port (-EINVAL), then the XSM check (-EPERM).
long status(Vcpu& vcpu, uint64_t argument) {
  evtchn_status_t request;
  if (!guest_memory::read(vcpu, argument, request)) return -XEN_EFAULT;
  Domain* domain = by_any_id(vcpu, request.dom);
  if (!domain) return -XEN_ESRCH;
  evtchn::Table table = domain->channel_table();
  if (!table.valid(request.port)) return -XEN_EINVAL;
  if (!may_target(vcpu, *domain)) return -XEN_EPERM;
  if (long rc = evtchn::status(table, request.port, request)) return rc;
  return guest_memory::write(vcpu, argument, request) ? 0 : -XEN_EFAULT;
}
}  // namespace

void set_pending(Domain& domain, unsigned port) {
  if (event_channels_fifo::active(domain)) {
    event_channels_fifo::set_pending(domain, port);
    return;
  }
  shared_info_t* shared = domain.shared_info;
  if (!shared || port >= Domain::max_event_channels) return;
  if (test_and_set(shared->evtchn_pending, port)) return;
  // Pollers wake whether the port is masked or not: Linux's PV spinlock polls a masked port.
  if (!test(shared->evtchn_mask, port)) raise_upcall(notify_vcpu(domain, port), port);
  check_pollers(domain, port);
}

long port_poll(Domain& domain, unsigned port) {
  if (!domain.channel_table().valid(port)) return -XEN_EINVAL;
  if (event_channels_fifo::active(domain)) return evtchn_fifo::is_pending(domain.fifo, port) ? 1 : 0;
  shared_info_t* shared = domain.shared_info;
  return shared && port < Domain::max_event_channels && test(shared->evtchn_pending, port) ? 1 : 0;
}

void check_pollers(Domain& domain, unsigned port) {
  domain.for_each_vcpu([&](Vcpu& vcpu) {
    if (!vcpu.polling || (vcpu.poll_port >= 0 && unsigned(vcpu.poll_port) != port)) return;
    vcpu.end_poll();
    scheduler::wake(vcpu);
  });
}

void send_virq(Vcpu& vcpu, unsigned virq) {
  unsigned port = virq < NR_VIRQS ? unsigned(vcpu.virq_to_port[virq]) : 0;
  if (port)
    set_pending(*vcpu.domain, port);
  else if (virq == VIRQ_TIMER)
    scheduler::wake(vcpu);  // a timer still wakes SCHEDOP_block
}

void raise_domain_exception() {
  Domain* dom0 = domains::dom0();
  if (dom0 && dom0->alive()) send_virq(dom0->vcpus[0], VIRQ_DOM_EXC);  // a global VIRQ: bound on vCPU 0
}

namespace {
// VIRQ_TBUF to dom0 (Xen's xentrace sleeps on it): its trace buffers filled past half.
void wake_trace_consumer() {
  Domain* dom0 = domains::dom0();
  if (dom0 && dom0->alive()) send_virq(dom0->vcpus[0], VIRQ_TBUF);
}
}  // namespace

void init() {
  timers::set_event_sender(send_virq);
  domains::set_stop_notifier(raise_domain_exception);
  trace_buffers::set_consumer_notifier(wake_trace_consumer);
}

void set_hypervisor_backend(HypervisorBackend notified) { hypervisor_backend = notified; }

int bind_to_hypervisor(Domain& domain) {
  evtchn::Table table = domain.channel_table();
  return evtchn::bind_to_hypervisor(table);
}

unsigned ports_in_use(Domain& domain) { return domain.channel_table().count_in_use(); }

// destroydomain: every port closed as EVTCHNOP_close closes it, so the remote end of each
// interdomain channel is left unbound (waiting for a domain that will not come back), as Xen's
// evtchn_destroy does.
void close_all(Domain& domain) {
  evtchn::Table table = domain.channel_table();
  for (unsigned port = 1; port < Domain::max_event_channels; ++port) {
    if (domain.event_channels[port].state == State::free) continue;
    evtchn::close(table, port, table_of);
    forget_pending(domain, port);
  }
  event_channels_fifo::release(domain);  // the control block and array frames given back
  for (Vcpu& vcpu : domain.vcpus)
    for (uint64_t& port : vcpu.virq_to_port) port = 0;
  domain.console_port = 0;
}

long hypercall(Vcpu& vcpu, int command, uint64_t argument) {
  switch (command) {
    case EVTCHNOP_bind_virq: return bind_virq(vcpu, argument);
    case EVTCHNOP_alloc_unbound: return alloc_unbound(vcpu, argument);
    case EVTCHNOP_bind_ipi: return bind_ipi(vcpu, argument);
    case EVTCHNOP_bind_vcpu: return bind_vcpu(vcpu, argument);
    case EVTCHNOP_bind_interdomain: return bind_interdomain(vcpu, argument);
    case EVTCHNOP_unmask: return unmask(vcpu, argument);
    case EVTCHNOP_close: return close(vcpu, argument);
    case EVTCHNOP_send: return send(vcpu, argument);
    case EVTCHNOP_status: return status(vcpu, argument);
    case EVTCHNOP_init_control: return event_channels_fifo::init_control(vcpu, argument);
    case EVTCHNOP_expand_array: return event_channels_fifo::expand_array(vcpu, argument);
    case EVTCHNOP_set_priority: return event_channels_fifo::set_priority(vcpu, argument);
    default: return -XEN_ENOSYS;
  }
}
}  // namespace event_channels
