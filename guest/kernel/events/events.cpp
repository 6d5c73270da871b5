#include "kernel/events/events.h"

#include "arch/xen.h"
#include "kernel/console/panic.h"
#include "pv-kernel-patches/shared_info.h"
#include "pv-kernel-patches/vcpu_identity.h"

namespace kernel {
namespace {

constexpr uint32_t kMaxHandledPorts = 64;
constexpr unsigned kBitsPerWord = sizeof(xen_ulong_t) * 8;
EventHandler handlers[kMaxHandledPorts];
uint8_t port_vcpus[kMaxHandledPorts];  // the vCPU each port notifies (ports beyond: vCPU 0)
uint64_t delivered;

void dispatch(uint32_t port) {
  __atomic_fetch_add(&delivered, 1, __ATOMIC_RELAXED);
  if (port < kMaxHandledPorts && handlers[port] != nullptr) handlers[port](port);
}

bool is_mine(uint32_t port, unsigned vcpu) { return (port < kMaxHandledPorts ? port_vcpus[port] : 0) == vcpu; }

void scan_word(unsigned word, unsigned vcpu) {
  shared_info_t* shared = shared_info();
  xen_ulong_t pending = shared->evtchn_pending[word] & ~shared->evtchn_mask[word];
  while (pending != 0) {
    unsigned bit = __builtin_ctzl(pending);
    pending &= pending - 1;
    const uint32_t port = word * kBitsPerWord + bit;
    if (!is_mine(port, vcpu)) continue;  // another vCPU's: its own upcall takes it
    // Acknowledge before handling, so an event raised by the handler is not lost.
    __atomic_fetch_and(&shared->evtchn_pending[word], ~(xen_ulong_t{1} << bit), __ATOMIC_SEQ_CST);
    dispatch(port);
  }
}

// The FIFO ABI once selftest=evtchn-fifo switched to it (null: 2-level).
evtchn_fifo_control_block* fifo_control;
event_word_t* fifo_array;
uint32_t fifo_heads[EVTCHN_FIFO_MAX_QUEUES];  // where each queue continues (0: read HEAD again)
constexpr event_word_t kFifoPending = 1u << EVTCHN_FIFO_PENDING, kFifoMasked = 1u << EVTCHN_FIFO_MASKED,
                       kFifoLinked = 1u << EVTCHN_FIFO_LINKED;
constexpr unsigned kFifoPorts = 4096 / sizeof(event_word_t);

// Clears LINKED (and LINK) of a consumed word; the LINK it had is the queue's next port. A
// cmpxchg loop: the hypervisor may write LINK meanwhile.
uint32_t clear_linked(event_word_t* word) {
  event_word_t seen = __atomic_load_n(word, __ATOMIC_SEQ_CST);
  while (!__atomic_compare_exchange_n(word, &seen, seen & ~(kFifoLinked | EVTCHN_FIFO_LINK_MASK), false,
                                      __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
  }
  return seen & EVTCHN_FIFO_LINK_MASK;
}

// The ready queues, lowest priority number first; each event handled if still pending and
// unmasked (its PENDING cleared first, so an event raised by the handler is not lost).
void drain_fifo() {
  uint32_t ready = __atomic_exchange_n(&fifo_control->ready, 0, __ATOMIC_SEQ_CST);
  while (ready != 0) {
    const unsigned queue = __builtin_ctz(ready);
    bool more = false;
    const uint32_t port = events_fifo_take(queue, more);
    if (!more) ready &= ~(1u << queue);
    if (port != 0 && port < kFifoPorts) {
      event_word_t* word = &fifo_array[port];
      if ((__atomic_load_n(word, __ATOMIC_SEQ_CST) & (kFifoPending | kFifoMasked)) == kFifoPending) {
        __atomic_fetch_and(word, ~kFifoPending, __ATOMIC_SEQ_CST);
        dispatch(port);
      }
    }
    ready |= __atomic_exchange_n(&fifo_control->ready, 0, __ATOMIC_SEQ_CST);
  }
}

}  // namespace

uint32_t events_fifo_take(unsigned queue, bool& more) {
  more = false;
  if (!fifo_control || queue >= EVTCHN_FIFO_MAX_QUEUES) return 0;
  uint32_t port = fifo_heads[queue];
  if (port == 0) port = __atomic_load_n(&fifo_control->head[queue], __ATOMIC_SEQ_CST);
  if (port == 0 || port >= kFifoPorts) {
    fifo_heads[queue] = 0;
    return 0;
  }
  const uint32_t next = clear_linked(&fifo_array[port]);
  fifo_heads[queue] = next < kFifoPorts ? next : 0;
  more = fifo_heads[queue] != 0;
  return port;
}

void events_use_fifo(evtchn_fifo_control_block* control, event_word_t* array) {
  for (uint32_t& head : fifo_heads) head = 0;
  fifo_array = array;
  fifo_control = control;
}

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

namespace {
long attach_on(long rc, uint32_t port, unsigned vcpu, EventHandler handler) {
  if (rc < 0) return rc;
  if (port >= kMaxHandledPorts) panic("event port %u out of range", port);
  port_vcpus[port] = uint8_t(vcpu);
  handlers[port] = handler;
  return events_unmask(port);
}
}  // namespace

long events_bind_virq_on(uint32_t virq, unsigned vcpu, EventHandler handler, uint32_t& port) {
  evtchn_bind_virq_t bind{};
  bind.virq = virq;
  bind.vcpu = vcpu;
  const long rc = xen::event_channel_op(EVTCHNOP_bind_virq, &bind);
  port = bind.port;
  return attach_on(rc, port, vcpu, handler);
}

long events_bind_ipi(unsigned vcpu, EventHandler handler, uint32_t& port) {
  evtchn_bind_ipi_t bind{};
  bind.vcpu = vcpu;
  const long rc = xen::event_channel_op(EVTCHNOP_bind_ipi, &bind);
  port = bind.port;
  return attach_on(rc, port, vcpu, handler);
}

void events_set_vcpu(uint32_t port, unsigned vcpu) {
  if (port < kMaxHandledPorts) port_vcpus[port] = uint8_t(vcpu);
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
  port_vcpus[port] = 0;
}

EventHandler events_handler(uint32_t port) { return port < kMaxHandledPorts ? handlers[port] : nullptr; }

void events_mask(uint32_t port) {
  if (fifo_control) {
    if (port < kFifoPorts) __atomic_fetch_or(&fifo_array[port], kFifoMasked, __ATOMIC_SEQ_CST);
    return;
  }
  __atomic_fetch_or(&shared_info()->evtchn_mask[port / kBitsPerWord], xen_ulong_t{1} << (port % kBitsPerWord),
                    __ATOMIC_SEQ_CST);
}

long events_unmask(uint32_t port) {
  evtchn_unmask_t unmask{};
  unmask.port = port;
  return xen::event_channel_op(EVTCHNOP_unmask, &unmask);
}

void events_handle_upcall() {
  const unsigned me = current_vcpu_id();
  vcpu_info_t* v = vcpu_info_of(me);
  v->evtchn_upcall_pending = 0;
  if (fifo_control) {  // only vCPU 0 takes events once the kernel is on FIFO
    if (me == 0) drain_fifo();
    return;
  }
  xen_ulong_t selector = __atomic_exchange_n(&v->evtchn_pending_sel, 0, __ATOMIC_SEQ_CST);
  while (selector != 0) {
    unsigned word = __builtin_ctzl(selector);
    selector &= selector - 1;
    scan_word(word, me);
  }
}

uint64_t events_delivered() { return delivered; }

}  // namespace kernel
