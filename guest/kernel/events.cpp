#include "kernel/events.h"

#include "arch/xen.h"
#include "kernel/panic.h"
#include "kernel/shared_info.h"

namespace kernel {
namespace {

constexpr uint32_t kMaxHandledPorts = 64;
constexpr unsigned kBitsPerWord = sizeof(xen_ulong_t) * 8;
EventHandler handlers[kMaxHandledPorts];
uint64_t delivered;

void dispatch(uint32_t port) {
  ++delivered;
  if (port < kMaxHandledPorts && handlers[port] != nullptr) handlers[port](port);
}

void scan_word(unsigned word) {
  shared_info_t* shared = shared_info();
  xen_ulong_t pending = shared->evtchn_pending[word] & ~shared->evtchn_mask[word];
  while (pending != 0) {
    unsigned bit = __builtin_ctzl(pending);
    pending &= pending - 1;
    // Acknowledge before handling, so an event raised by the handler is not lost.
    __atomic_fetch_and(&shared->evtchn_pending[word], ~(xen_ulong_t{1} << bit), __ATOMIC_SEQ_CST);
    dispatch(word * kBitsPerWord + bit);
  }
}

}  // namespace

uint32_t events_bind_virq(uint32_t virq, EventHandler handler) {
  evtchn_bind_virq_t bind{};
  bind.virq = virq;
  bind.vcpu = 0;
  long rc = xen::event_channel_op(EVTCHNOP_bind_virq, &bind);
  if (rc < 0) panic("bind_virq %u: %ld", virq, rc);
  if (bind.port >= kMaxHandledPorts) panic("event port %u out of range", bind.port);
  handlers[bind.port] = handler;
  evtchn_unmask_t unmask{};
  unmask.port = bind.port;
  rc = xen::event_channel_op(EVTCHNOP_unmask, &unmask);
  if (rc < 0) panic("unmask port %u: %ld", bind.port, rc);
  return bind.port;
}

bool events_attach(uint32_t port, EventHandler handler) {
  if (port >= kMaxHandledPorts) return false;
  handlers[port] = handler;
  return events_unmask(port) == 0;
}

void events_detach(uint32_t port) {
  if (port >= kMaxHandledPorts) return;
  events_mask(port);
  handlers[port] = nullptr;
}

EventHandler events_handler(uint32_t port) { return port < kMaxHandledPorts ? handlers[port] : nullptr; }

void events_mask(uint32_t port) {
  __atomic_fetch_or(&shared_info()->evtchn_mask[port / kBitsPerWord], xen_ulong_t{1} << (port % kBitsPerWord),
                    __ATOMIC_SEQ_CST);
}

long events_unmask(uint32_t port) {
  evtchn_unmask_t unmask{};
  unmask.port = port;
  return xen::event_channel_op(EVTCHNOP_unmask, &unmask);
}

void events_handle_upcall() {
  vcpu_info_t* v = vcpu();
  v->evtchn_upcall_pending = 0;
  xen_ulong_t selector = __atomic_exchange_n(&v->evtchn_pending_sel, 0, __ATOMIC_SEQ_CST);
  while (selector != 0) {
    unsigned word = __builtin_ctzl(selector);
    selector &= selector - 1;
    scan_word(word);
  }
}

uint64_t events_delivered() { return delivered; }

}  // namespace kernel
