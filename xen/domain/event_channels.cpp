#include "domain/event_channels.h"
#include "mm/xen_abi.h"
#include <xen/errno.h>
#include <xen/event_channel.h>
#include <xen/xen.h>
#include "domain/domain.h"
#include "domain/scheduler.h"
#include "pv/guest_memory.h"

namespace event_channels {
namespace {
using Channel = Domain::EventChannel;
constexpr unsigned bits_per_word = 64;

bool test_and_set(xen_ulong_t* words, unsigned bit) {
  xen_ulong_t mask = xen_ulong_t(1) << (bit % bits_per_word);
  bool was = words[bit / bits_per_word] & mask;
  words[bit / bits_per_word] |= mask;
  return was;
}
bool test(const xen_ulong_t* words, unsigned bit) {
  return words[bit / bits_per_word] & (xen_ulong_t(1) << (bit % bits_per_word));
}

void raise_upcall(Vcpu& vcpu, unsigned port) {
  vcpu_info_t* info = vcpu.info();
  test_and_set(&info->evtchn_pending_sel, port / bits_per_word);
  info->evtchn_upcall_pending = 1;
  scheduler::wake(vcpu);
}

int allocate(Domain& domain) {
  for (unsigned port = 1; port < Domain::max_event_channels; ++port)  // port 0 is reserved
    if (domain.event_channels[port].state == Channel::State::free) return int(port);
  return -XEN_ENOSPC;
}

long bind_virq(Vcpu& vcpu, uint64_t argument) {
  evtchn_bind_virq_t bind;
  if (!guest_memory::read(vcpu, argument, bind)) return -XEN_EFAULT;
  if (bind.virq >= NR_VIRQS) return -XEN_EINVAL;
  if (bind.vcpu != 0) return -XEN_ENOENT;
  if (vcpu.virq_to_port[bind.virq]) return -XEN_EEXIST;
  int port = allocate(*vcpu.domain);
  if (port < 0) return port;
  vcpu.domain->event_channels[port] = {Channel::State::virq, bind.virq, bind.vcpu};
  vcpu.virq_to_port[bind.virq] = unsigned(port);
  bind.port = evtchn_port_t(port);
  if (!guest_memory::write(vcpu, argument, bind)) return -XEN_EFAULT;
  return 0;
}

bool valid_port(const Domain& domain, evtchn_port_t port) {
  return port > 0 && port < Domain::max_event_channels && domain.event_channels[port].state != Channel::State::free;
}

long unmask(Vcpu& vcpu, uint64_t argument) {
  evtchn_unmask_t request;
  if (!guest_memory::read(vcpu, argument, request)) return -XEN_EFAULT;
  Domain& domain = *vcpu.domain;
  if (!valid_port(domain, request.port)) return -XEN_EINVAL;
  shared_info_t* shared = domain.shared_info;
  shared->evtchn_mask[request.port / bits_per_word] &= ~(xen_ulong_t(1) << (request.port % bits_per_word));
  if (test(shared->evtchn_pending, request.port)) raise_upcall(vcpu, request.port);
  return 0;
}

long close(Vcpu& vcpu, uint64_t argument) {
  evtchn_close_t request;
  if (!guest_memory::read(vcpu, argument, request)) return -XEN_EFAULT;
  Domain& domain = *vcpu.domain;
  if (!valid_port(domain, request.port)) return -XEN_EINVAL;
  Channel& channel = domain.event_channels[request.port];
  if (channel.state == Channel::State::virq) vcpu.virq_to_port[channel.virq] = 0;
  channel = Channel{};
  return 0;
}

long send(Vcpu& vcpu, uint64_t argument) {
  evtchn_send_t request;
  if (!guest_memory::read(vcpu, argument, request)) return -XEN_EFAULT;
  if (!valid_port(*vcpu.domain, request.port)) return -XEN_EINVAL;
  // A VIRQ port has no remote end: sending to it is accepted and does nothing, as in Xen.
  return 0;
}
}  // namespace

void set_pending(Domain& domain, unsigned port) {
  shared_info_t* shared = domain.shared_info;
  if (test_and_set(shared->evtchn_pending, port)) return;
  if (test(shared->evtchn_mask, port)) return;
  raise_upcall(domain.vcpu0, port);
}

void send_virq(Vcpu& vcpu, unsigned virq) {
  unsigned port = virq < NR_VIRQS ? unsigned(vcpu.virq_to_port[virq]) : 0;
  if (port) set_pending(*vcpu.domain, port);
  else if (virq == VIRQ_TIMER) scheduler::wake(vcpu);  // a timer still wakes SCHEDOP_block
}

void close_all(Domain& domain) {
  for (Channel& channel : domain.event_channels) channel = Channel{};
  for (uint64_t& port : domain.vcpu0.virq_to_port) port = 0;
}

long hypercall(Vcpu& vcpu, int command, uint64_t argument) {
  switch (command) {
    case EVTCHNOP_bind_virq: return bind_virq(vcpu, argument);
    case EVTCHNOP_unmask: return unmask(vcpu, argument);
    case EVTCHNOP_close: return close(vcpu, argument);
    case EVTCHNOP_send: return send(vcpu, argument);
    default: return -XEN_ENOSYS;
  }
}
}  // namespace event_channels
