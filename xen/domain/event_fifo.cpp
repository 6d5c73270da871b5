#include "domain/event_fifo.h"
#include <xen/errno.h>

namespace evtchn_fifo {
namespace {
// Every access to a guest word is one atomic operation on it: the guest (or another domain
// mapping the page) may change it at any moment.
event_word_t load(const event_word_t* word) { return __atomic_load_n(word, __ATOMIC_SEQ_CST); }
bool test_and_set(event_word_t* word, event_word_t bits) {
  return __atomic_fetch_or(word, bits, __ATOMIC_SEQ_CST) & bits;
}
void clear(event_word_t* word, event_word_t bits) { __atomic_fetch_and(word, ~bits, __ATOMIC_SEQ_CST); }

enum class Attempt { linked, tail_consumed, word_changed };

// One try at writing `port` into the LINK field of the tail's word, only while it is LINKED
// (otherwise the guest consumed the tail and the queue is empty). BUSY is cleared with the same
// store. On word_changed `seen` holds the word as it is now.
Attempt try_link(event_word_t* tail, event_word_t& seen, uint32_t port) {
  if (!(seen & kLinked)) return Attempt::tail_consumed;
  const event_word_t wanted = (seen & ~(kBusy | kLinkMask)) | port;
  if (__atomic_compare_exchange_n(tail, &seen, wanted, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
    return Attempt::linked;
  return Attempt::word_changed;
}

// Links `port` behind the tail: true when it was (or when the guest kept changing the tail
// and the hypervisor gave up, as Xen does: the event then waits for the guest's next look at
// its queue), false when the tail was consumed (the port must become the HEAD). After a first
// failed try the tail is marked BUSY, which stops an honest guest from unmasking it, so the
// retries are few and bounded.
bool link_behind(DomainFifo& fifo, event_word_t* tail, uint32_t port) {
  event_word_t seen = load(tail);
  Attempt attempt = try_link(tail, seen, port);
  if (attempt != Attempt::word_changed) return attempt == Attempt::linked;
  test_and_set(tail, kBusy);
  seen = load(tail);
  for (unsigned i = 0; i < kLinkRetries; ++i) {
    attempt = try_link(tail, seen, port);
    if (attempt == Attempt::linked) return true;
    if (attempt == Attempt::tail_consumed) {
      clear(tail, kBusy);
      return false;
    }
  }
  clear(tail, kBusy);
  ++fifo.links_given_up;
  return true;
}

// `port` was just marked LINKED: it goes behind the tail of its priority's queue, or becomes
// the HEAD of an empty one. True when the vCPU must be told (the queue was empty and READY
// clear).
bool enqueue(DomainFifo& fifo, unsigned port, unsigned vcpu) {
  PortQueueState& state = fifo.ports[port];
  const unsigned queue = state.priority;
  // If it was a tail it has been consumed (it was not LINKED): that queue is empty now, and a
  // later link into it must not go behind this word, which may be on another queue by then.
  uint32_t& old_tail = fifo.vcpus[state.last_vcpu].tails[state.last_queue];
  if (old_tail == port) old_tail = 0;
  state.last_queue = uint8_t(queue);
  state.last_vcpu = uint8_t(vcpu);
  uint32_t* tails = fifo.vcpus[vcpu].tails;
  bool linked = false;
  if (const uint32_t tail = tails[queue]) {
    if (event_word_t* tail_word = fifo.word(tail)) linked = link_behind(fifo, tail_word, port);
  }
  evtchn_fifo_control_block* control = fifo.control(vcpu);
  if (!linked) __atomic_store_n(&control->head[queue], uint32_t(port), __ATOMIC_SEQ_CST);
  tails[queue] = port;
  if (linked) return false;
  return !test_and_set(&control->ready, event_word_t{1} << queue);
}
}  // namespace

int check_control_offset(uint64_t offset) {
  if (offset > kPageSize - sizeof(evtchn_fifo_control_block)) return -XEN_EINVAL;
  if (offset % 8 != 0) return -XEN_EINVAL;
  return 0;
}

event_word_t* DomainFifo::word(unsigned port) const {
  if (port >= word_count()) return nullptr;
  uint8_t* page = memory + array_mfns[port / kWordsPerPage] * kPageSize;
  return reinterpret_cast<event_word_t*>(page) + port % kWordsPerPage;
}

evtchn_fifo_control_block* DomainFifo::control(unsigned vcpu) const {
  const VcpuQueues& queues = vcpus[vcpu];
  return reinterpret_cast<evtchn_fifo_control_block*>(memory + queues.control_mfn * kPageSize + queues.control_offset);
}

void start(DomainFifo& fifo, uint8_t* memory, uint64_t control_mfn, uint32_t control_offset,
           const xen_ulong_t* pending_2level, unsigned ports, unsigned vcpu) {
  stop(fifo);
  fifo.memory = memory;
  constexpr unsigned bits = sizeof(xen_ulong_t) * 8;
  for (unsigned port = 1; port < ports && port < kPortCapacity; ++port)
    fifo.ports[port].deferred = (pending_2level[port / bits] >> (port % bits)) & 1;
  fifo.active = true;
  (void)add_control_block(fifo, vcpu, control_mfn, control_offset);
}

int add_control_block(DomainFifo& fifo, unsigned vcpu, uint64_t control_mfn, uint32_t control_offset) {
  if (vcpu >= kMaxVcpus) return -XEN_ENOENT;
  VcpuQueues& queues = fifo.vcpus[vcpu];
  if (queues.has_control) return -XEN_EINVAL;
  queues.control_mfn = control_mfn;
  queues.control_offset = control_offset;
  queues.has_control = true;
  return 0;
}

bool has_control_block(const DomainFifo& fifo, unsigned vcpu) {
  return fifo.active && vcpu < kMaxVcpus && fifo.vcpus[vcpu].has_control;
}

int check_room_for_page(const DomainFifo& fifo) { return fifo.array_pages < kMaxArrayPages ? 0 : -XEN_ENOSPC; }

uint32_t add_array_page(DomainFifo& fifo, uint64_t mfn, VcpuOf vcpu_of, const void* context) {
  if (check_room_for_page(fifo) != 0) return 0;
  const unsigned first = fifo.word_count();
  fifo.array_mfns[fifo.array_pages++] = mfn;
  uint32_t tell = 0;
  for (unsigned port = first; port < fifo.word_count() && port < kPortCapacity; ++port) {
    if (!fifo.ports[port].deferred) continue;
    fifo.ports[port].deferred = false;
    const unsigned vcpu = vcpu_of ? vcpu_of(context, port) : 0;
    if (set_pending(fifo, port, vcpu)) tell |= 1u << vcpu;
  }
  return tell;
}

bool set_pending(DomainFifo& fifo, unsigned port, unsigned vcpu) {
  if (!fifo.active || port >= kPortCapacity) return false;
  event_word_t* word = fifo.word(port);
  if (!word) {
    fifo.ports[port].deferred = true;
    return false;
  }
  if (!has_control_block(fifo, vcpu)) return false;  // Xen: the event is dropped
  test_and_set(word, kPending);
  if (load(word) & kMasked) return false;
  if (test_and_set(word, kLinked)) return false;  // already in a queue: the guest will get to it
  return enqueue(fifo, port, vcpu);
}

bool unmask(DomainFifo& fifo, unsigned port, unsigned vcpu) {
  event_word_t* word = fifo.active ? fifo.word(port) : nullptr;
  if (!word) return false;
  clear(word, kMasked);
  return (load(word) & kPending) && set_pending(fifo, port, vcpu);
}

void clear_pending(DomainFifo& fifo, unsigned port) {
  if (port < kPortCapacity) fifo.ports[port].deferred = false;
  if (event_word_t* word = fifo.active ? fifo.word(port) : nullptr) clear(word, kPending);
}

int set_priority(DomainFifo& fifo, unsigned port, uint32_t priority) {
  if (priority > EVTCHN_FIFO_PRIORITY_MIN) return -XEN_EINVAL;
  if (port < kPortCapacity) fifo.ports[port].priority = uint8_t(priority);
  return 0;
}

void reset_port(DomainFifo& fifo, unsigned port) {
  if (port >= kPortCapacity) return;
  fifo.ports[port].priority = EVTCHN_FIFO_PRIORITY_DEFAULT;
  fifo.ports[port].deferred = false;
}

bool is_linked(const DomainFifo& fifo, unsigned port) {
  const event_word_t* word = fifo.active ? fifo.word(port) : nullptr;
  return word && (load(word) & kLinked);
}

bool is_pending(const DomainFifo& fifo, unsigned port) {
  const event_word_t* word = fifo.active ? fifo.word(port) : nullptr;
  return word && (load(word) & kPending);
}

// Field by field: a DomainFifo is a few KiB, too much for a temporary on the hypervisor's stack.
void stop(DomainFifo& fifo) {
  fifo.active = false;
  fifo.memory = nullptr;
  for (VcpuQueues& queues : fifo.vcpus) queues = VcpuQueues{};
  for (uint64_t& mfn : fifo.array_mfns) mfn = 0;
  fifo.array_pages = 0;
  for (PortQueueState& port : fifo.ports) port = PortQueueState{};
  fifo.links_given_up = 0;
}
}  // namespace evtchn_fifo
