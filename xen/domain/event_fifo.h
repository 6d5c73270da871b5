// The FIFO event-channel ABI of one domain (Xen 4.17's EVTCHNOP_init_control, expand_array,
// set_priority; the semantics of xen/common/event_fifo.c, written here from the public header's
// contract): a 32-bit event word per port in guest pages (PENDING, MASKED, LINKED, BUSY and a
// 17-bit LINK to the next port of its queue), and per vCPU a control block in a guest page (a
// READY bit per priority and the HEAD port of each of the 16 priority queues). The hypervisor
// links a pending, unmasked, unlinked event behind the tail of its priority's queue (or makes
// it the HEAD when the queue is empty), sets READY and asks for an upcall; the guest consumes
// from HEAD, clearing LINKED as it goes. An event goes to the queues of the vCPU its port
// notifies; a port moved to another vCPU (or priority) while linked stays where it is until
// consumed, and its next link goes to the new queue (Xen's fifo_lastq).
//
// The guest is hostile and runs concurrently in principle: its words are only ever tested and
// changed bit by bit with atomics, nothing read from them indexes anything (the tails are the
// hypervisor's own, the LINK values its own writes), and the one cmpxchg loop (linking behind a
// tail the guest may change) is bounded. Pure: no domain lookup, no frame references (the glue,
// event/event_channels_fifo, takes and drops them); guest frames are addressed through a base
// pointer (the direct map in the hypervisor, a buffer in the unit tests).
#pragma once
#include <stdint.h>
#include "abi/xen_abi.h"
#include <xen/xen.h>
#include <xen/event_channel.h>

namespace evtchn_fifo {
inline constexpr unsigned kPageSize = 4096;
inline constexpr unsigned kWordsPerPage = kPageSize / sizeof(event_word_t);
// The most array pages Xen accepts (the LINK field's reach); one more is -ENOSPC.
inline constexpr unsigned kMaxArrayPages = EVTCHN_FIFO_NR_CHANNELS / kWordsPerPage;
inline constexpr unsigned kQueues = EVTCHN_FIFO_MAX_QUEUES;
// The ports whose queue state is kept (the domain's port table: Domain::max_event_channels).
inline constexpr unsigned kPortCapacity = 1024;

inline constexpr event_word_t kPending = 1u << EVTCHN_FIFO_PENDING;
inline constexpr event_word_t kMasked = 1u << EVTCHN_FIFO_MASKED;
inline constexpr event_word_t kLinked = 1u << EVTCHN_FIFO_LINKED;
inline constexpr event_word_t kBusy = 1u << EVTCHN_FIFO_BUSY;
inline constexpr event_word_t kLinkMask = EVTCHN_FIFO_LINK_MASK;

// How often the hypervisor retries linking behind a tail the guest keeps changing (it may only
// set or clear MASKED, clear PENDING, or clear LINKED: with BUSY set it cannot unmask, so an
// honest guest makes a retry fail a few times at most).
inline constexpr unsigned kLinkRetries = 4;

// EVTCHNOP_init_control's argument rules before any frame is looked at: the control block must
// lie within the page and on an 8-byte boundary (-EINVAL otherwise), as Xen 4.17.
int check_control_offset(uint64_t offset);

struct PortQueueState {
  uint8_t priority = EVTCHN_FIFO_PRIORITY_DEFAULT;    // the queue its next link goes to
  uint8_t last_queue = EVTCHN_FIFO_PRIORITY_DEFAULT;  // the queue it was last linked into
  uint8_t last_vcpu = 0;                              // of this vCPU (Xen's fifo_lastq)
  bool deferred = false;  // raised while its word had no array page: raised again when it gets one
};

// The vCPUs whose queues are kept (a domain's vCPUs: domain/domain.h checks it has no more).
inline constexpr unsigned kMaxVcpus = 8;

// One vCPU's control block (EVTCHNOP_init_control names the vCPU) and its queues' tails. An
// event for a vCPU without a control block is dropped, as Xen drops it.
struct VcpuQueues {
  bool has_control = false;
  uint64_t control_mfn = 0;
  uint32_t control_offset = 0;
  uint32_t tails[kQueues]{};  // the last port linked into each queue (0: none known)
};

// A domain's FIFO state: the event array, shared by its vCPUs, and each vCPU's queues.
// Inactive until the first init_control.
struct DomainFifo {
  bool active = false;
  uint8_t* memory = nullptr;  // where machine frame 0 is addressed (frame n at memory + n * 4096)
  VcpuQueues vcpus[kMaxVcpus];
  uint64_t array_mfns[kMaxArrayPages]{};
  unsigned array_pages = 0;
  PortQueueState ports[kPortCapacity];
  uint32_t links_given_up = 0;  // tails the guest kept changing (an event it then never sees)

  unsigned word_count() const { return array_pages * kWordsPerPage; }
  // The event word of `port`, or null when no array page holds it.
  event_word_t* word(unsigned port) const;
  // The control block of `vcpu` (it must have one).
  evtchn_fifo_control_block* control(unsigned vcpu = 0) const;
};

// Starts FIFO on `fifo` with the control block of `vcpu` (the glue holds the frame): every
// existing port gets the default priority, and those of ports 1 .. ports-1 pending in the
// 2-level bitmap are remembered, to be raised in their words once the guest supplies the
// array pages (the guest owns MASKED: its new words say what is masked).
void start(DomainFifo& fifo, uint8_t* memory, uint64_t control_mfn, uint32_t control_offset,
           const xen_ulong_t* pending_2level, unsigned ports, unsigned vcpu = 0);
// Another vCPU's control block once FIFO is active: -EINVAL when it has one already (Xen's
// map_control_block), -ENOENT beyond kMaxVcpus.
int add_control_block(DomainFifo& fifo, unsigned vcpu, uint64_t control_mfn, uint32_t control_offset);
bool has_control_block(const DomainFifo& fifo, unsigned vcpu);

// Which vCPU an event of `port` goes to now (the port's notify vCPU, the glue's to know).
using VcpuOf = unsigned (*)(const void* context, unsigned port);

// EVTCHNOP_expand_array's page count check: -ENOSPC once kMaxArrayPages are there.
int check_room_for_page(const DomainFifo& fifo);
// Adds the next array page (the glue holds the frame) and raises again the events that were
// raised while their words had no page, each to the vCPU `vcpu_of` names (null: vCPU 0). The
// vCPUs that must be told (an upcall), one bit each.
uint32_t add_array_page(DomainFifo& fifo, uint64_t mfn, VcpuOf vcpu_of = nullptr, const void* context = nullptr);

// Marks `port` pending and links it into its queue on `vcpu` unless masked or already linked.
// True: the vCPU must be told (the queue was empty and its READY bit was clear). Nothing
// happens for a vCPU without a control block.
bool set_pending(DomainFifo& fifo, unsigned port, unsigned vcpu = 0);
// Clears MASKED, and links the event on `vcpu` if it is pending. True: the vCPU must be told.
bool unmask(DomainFifo& fifo, unsigned port, unsigned vcpu = 0);
// Clears PENDING (a closed port): the guest unlinks and ignores events no longer pending.
void clear_pending(DomainFifo& fifo, unsigned port);
// The port's priority for its next link: -EINVAL beyond EVTCHN_FIFO_PRIORITY_MIN. A linked
// event stays in the queue it is in.
int set_priority(DomainFifo& fifo, unsigned port, uint32_t priority);
// A port (re)bound: default priority, nothing remembered.
void reset_port(DomainFifo& fifo, unsigned port);
// Whether `port`'s event is still in a queue (LINKED in its word).
bool is_linked(const DomainFifo& fifo, unsigned port);
bool is_pending(const DomainFifo& fifo, unsigned port);

// Back to nothing (teardown, after the glue dropped its frames).
void stop(DomainFifo& fifo);

// Every guest frame the FIFO state writes (the control block's, then each array page's, a
// frame given twice visited twice): each is held with a general and a writable type reference.
template <typename Visit>
void for_each_frame(const DomainFifo& fifo, Visit visit) {
  if (!fifo.active) return;
  for (const VcpuQueues& queues : fifo.vcpus)
    if (queues.has_control) visit(queues.control_mfn);
  for (unsigned i = 0; i < fifo.array_pages; ++i) visit(fifo.array_mfns[i]);
}
// How many that can be at most.
inline constexpr unsigned kMaxFramesHeld = kMaxVcpus + kMaxArrayPages;
}  // namespace evtchn_fifo
