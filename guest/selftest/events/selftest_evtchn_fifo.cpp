// selftest=evtchn-fifo: the FIFO event-channel ABI as Xen 4.17 serves it. Before
// EVTCHNOP_init_control: set_priority -ENOSYS, expand_array -EOPNOTSUPP. init_control's
// refusals (a vCPU the domain does not have -ENOENT; a misaligned offset, one leaving no room
// for the control block, a frame not the domain's (XSA-188's), a page table -EINVAL; an
// unreadable argument -EFAULT), then success with link_bits 17, and a second call -EINVAL. The
// control block's frame is then held writable by the hypervisor: mapped read-only here and
// pinned as an L1 it is refused. expand_array's refusals, the event pending under the 2-level
// ABI carried into its word, 128 pages and the 129th -ENOSPC, set_priority's answers. Then
// real FIFO delivery on queue 2: unmask links a pending event as HEAD with READY and the
// upcall flag set, a second event is LINKed behind it, the guest consumes both (clearing
// LINKED), a consumed tail makes the next event HEAD again, a masked event stays unlinked until
// unmasked, priority 0 is its own queue, close clears PENDING, an interdomain channel to
// ourselves delivers; an IPI handled by the kernel's upcall and the timer's VIRQ both arrive
// through the queues. The kernel keeps using FIFO for the rest of its life (init runs on it).
// The same checks run on Xen 4.17.
#include "arch/hypercall.h"
#include "arch/xen.h"
#include "arch/event_channel_ops.h"
#include "kernel/events/events.h"
#include "kernel/memory/page_allocator.h"
#include "kernel/memory/physical_memory.h"
#include "selftest/events/events_selftests.h"
#include "selftest/selftest_page_tables.h"
#include "pv-kernel-patches/shared_info.h"
#include "kernel/events/time.h"
#include "kernel/events/timer.h"
#include "pv-kernel-patches/pv_ops.h"

namespace kernel {
namespace {
using page_table_tests::kReadOnly;
using page_table_tests::kWritable;
constexpr uint32_t kControlOffset = 128;
constexpr unsigned kQueue = 2;  // the test's own queue: the kernel's timer stays on the default 7
constexpr event_word_t kPending = 1u << EVTCHN_FIFO_PENDING, kMasked = 1u << EVTCHN_FIFO_MASKED,
                       kLinked = 1u << EVTCHN_FIFO_LINKED, kFlags = kPending | kMasked | kLinked;
constexpr unsigned kBits = sizeof(xen_ulong_t) * 8;
constexpr uint64_t kUnreadable = 0xffff800000000000ull;

long init_control(uint64_t gfn, uint32_t offset, uint32_t vcpu, uint8_t* link_bits = nullptr) {
  evtchn_init_control_t request{};
  request.control_gfn = gfn;
  request.offset = offset;
  request.vcpu = vcpu;
  const long rc = xen::event_channel_op(EVTCHNOP_init_control, &request);
  if (link_bits) *link_bits = request.link_bits;
  return rc;
}
long expand_array(uint64_t gfn) {
  evtchn_expand_array_t request{gfn};
  return xen::event_channel_op(EVTCHNOP_expand_array, &request);
}
long set_priority(evtchn_port_t port, uint32_t priority) {
  evtchn_set_priority_t request{port, priority};
  return xen::event_channel_op(EVTCHNOP_set_priority, &request);
}

struct Fifo {
  Pfn control_pfn{0}, array_pfn{0};
  Mfn control_mfn{0}, array_mfn{0}, spare_mfn{0};
  evtchn_fifo_control_block* control = nullptr;
  event_word_t* words = nullptr;
  volatile event_word_t& word(evtchn_port_t port) { return words[port]; }
  event_word_t flags(evtchn_port_t port) { return word(port) & kFlags; }
  event_word_t link(evtchn_port_t port) { return word(port) & EVTCHN_FIFO_LINK_MASK; }
  uint32_t head(unsigned queue) { return __atomic_load_n(&control->head[queue], __ATOMIC_SEQ_CST); }
  bool ready(unsigned queue) { return __atomic_load_n(&control->ready, __ATOMIC_SEQ_CST) & (1u << queue); }
  void take_ready(unsigned queue) { __atomic_fetch_and(&control->ready, ~(1u << queue), __ATOMIC_SEQ_CST); }
  void ack(evtchn_port_t port) { __atomic_fetch_and(&words[port], ~kPending, __ATOMIC_SEQ_CST); }
};

bool masked_2level(evtchn_port_t port) { return shared_info()->evtchn_mask[port / kBits] >> (port % kBits) & 1; }

void before_init(SelfTest& test, Fifo& fifo, evtchn_port_t unbound) {
  test.check("set_priority under the 2-level ABI is -ENOSYS", set_priority(unbound, 3), -XEN_ENOSYS);
  test.check("set_priority of a port that does not exist is -EINVAL", set_priority(5000, 3), -XEN_EINVAL);
  test.check("expand_array before init_control is -EOPNOTSUPP", expand_array(fifo.array_mfn.value), -XEN_EOPNOTSUPP);
  const uint64_t gfn = fifo.control_mfn.value;
  test.check("init_control for a vCPU the domain does not have is -ENOENT", init_control(gfn, 0, 1000), -XEN_ENOENT);
  test.check("init_control for vCPU 0xffffffff is -ENOENT", init_control(gfn, 0, 0xffffffffu), -XEN_ENOENT);
  test.check("init_control with a misaligned offset is -EINVAL", init_control(gfn, 4, 0), -XEN_EINVAL);
  test.check("init_control with the block past the page end is -EINVAL",
             init_control(gfn, 4096 - sizeof(evtchn_fifo_control_block) + 8, 0), -XEN_EINVAL);
  test.check("init_control with offset 4096 is -EINVAL", init_control(gfn, 4096, 0), -XEN_EINVAL);
  test.check("init_control with a bad gfn (XSA-188) is -EINVAL",
             init_control(~uint64_t{1}, 4096 - sizeof(evtchn_fifo_control_block), 0), -XEN_EINVAL);
  test.check("  and expand_array after it is still -EOPNOTSUPP", expand_array(fifo.array_mfn.value), -XEN_EOPNOTSUPP);
  test.check("init_control on a page table (the kernel's L4) is -EINVAL", init_control(kernel_l4().value, 0, 0),
             -XEN_EINVAL);
  test.check("init_control with an unreadable argument is -EFAULT",
             arch::hypercall(__HYPERVISOR_event_channel_op, EVTCHNOP_init_control, kUnreadable), -XEN_EFAULT);
}

// The hypervisor writes the control block from now on: the frame must keep a writable type,
// even when the guest itself maps it read-only (the block is still all zeros: as a page table
// it would be valid, so only the hypervisor's hold can refuse it).
void control_frame_held(SelfTest& test, Fifo& fifo) {
  const uint64_t va = pfn_to_va(fifo.control_pfn);
  test.check("the control block's frame mapped read-only here",
             pv::ops.set_kernel_mapping(va, PageTableEntry::make(fifo.control_mfn, kReadOnly)), 0);
  const long pinned = pv::ops.raw_mmuext(MMUEXT_PIN_L1_TABLE, fifo.control_mfn.value);
  test.check("  cannot be pinned as an L1 table (the hypervisor holds it writable)", pinned, -XEN_EINVAL);
  if (pinned == 0) pv::ops.raw_mmuext(MMUEXT_UNPIN_TABLE, fifo.control_mfn.value);
  test.check("  and is writable here again",
             pv::ops.set_kernel_mapping(va, PageTableEntry::make(fifo.control_mfn, kWritable)), 0);
}

void array_pages(SelfTest& test, Fifo& fifo) {
  test.check("expand_array with a bad gfn is -EINVAL", expand_array(~uint64_t{1}), -XEN_EINVAL);
  test.check("expand_array on a page table is -EINVAL", expand_array(kernel_l4().value), -XEN_EINVAL);
  test.check("expand_array with an unreadable argument is -EFAULT",
             arch::hypercall(__HYPERVISOR_event_channel_op, EVTCHNOP_expand_array, kUnreadable), -XEN_EFAULT);
  test.check("expand_array with the first page works", expand_array(fifo.array_mfn.value), 0);
  // The spare frame is mapped read-only here (never written: no port reaches its words).
  long rc = 0;
  for (unsigned page = 1; page < EVTCHN_FIFO_NR_CHANNELS / 1024 && rc == 0; ++page)
    rc = expand_array(fifo.spare_mfn.value);
  test.check("expand_array up to 128 pages works (one frame given 127 times)", rc, 0);
  test.check("the 129th page is -ENOSPC", expand_array(fifo.spare_mfn.value), -XEN_ENOSPC);
  const long pinned = pv::ops.raw_mmuext(MMUEXT_PIN_L1_TABLE, fifo.spare_mfn.value);
  test.check("an array page mapped read-only here cannot be pinned as an L1", pinned, -XEN_EINVAL);
  if (pinned == 0) pv::ops.raw_mmuext(MMUEXT_UNPIN_TABLE, fifo.spare_mfn.value);
}

void priorities(SelfTest& test, evtchn_port_t unbound, evtchn_port_t closed) {
  test.check("set_priority of port 0 is -EACCES", set_priority(0, 3), -XEN_EACCES);
  test.check("set_priority of a closed port is -EACCES", set_priority(closed, 3), -XEN_EACCES);
  test.check("set_priority of a port that does not exist is -EINVAL", set_priority(5000, 3), -XEN_EINVAL);
  test.check("set_priority 16 is -EINVAL", set_priority(unbound, EVTCHN_FIFO_PRIORITY_MIN + 1), -XEN_EINVAL);
  test.check("set_priority 15 of an unbound port works", set_priority(unbound, EVTCHN_FIFO_PRIORITY_MIN), 0);
}

void queues(SelfTest& test, Fifo& fifo, evtchn_port_t p, evtchn_port_t q) {
  test.check("the event pending under the 2-level ABI is pending and masked in its word", fifo.flags(p),
             kPending | kMasked);
  test.check("set_priority 2 of the IPI port works", set_priority(p, kQueue), 0);
  test.check("and of the second one", set_priority(q, kQueue), 0);
  vcpu()->evtchn_upcall_pending = 0;
  test.check("EVTCHNOP_unmask of the pending port works", events_unmask(p), 0);
  test.check("  it is linked, pending, unmasked", fifo.flags(p), kPending | kLinked);
  test.check("  the HEAD of queue 2", fifo.head(kQueue), p);
  test.check("  queue 2 READY", fifo.ready(kQueue), true);
  test.check("  and the upcall flag set", vcpu()->evtchn_upcall_pending, 1);
  test.check("a second send while it is linked works", evtchn::send(p), 0);
  test.check("  and links nothing", fifo.link(p) == 0 && fifo.head(kQueue) == p, true);
  fifo.word(q) = 0;
  test.check("send on a second port of queue 2 works", evtchn::send(q), 0);
  test.check("  it is LINKed behind the first", fifo.link(p), q);
  test.check("  pending and linked itself", fifo.flags(q), kPending | kLinked);
  test.check("  HEAD unchanged", fifo.head(kQueue), p);
  bool more = false;
  test.check("the guest takes the HEAD", events_fifo_take(kQueue, more), p);
  test.check("  with more behind it", more, true);
  test.check("  its LINKED cleared", fifo.flags(p), kPending);
  test.check("then the second", events_fifo_take(kQueue, more), q);
  test.check("  the last", more, false);
  fifo.ack(p);
  fifo.ack(q);
  fifo.take_ready(kQueue);
  test.check("a send after the tail was consumed works", evtchn::send(p), 0);
  test.check("  the event is the new HEAD", fifo.head(kQueue), p);
  test.check("  queue 2 READY again", fifo.ready(kQueue), true);
  test.check("  taken", events_fifo_take(kQueue, more) == p && !more, true);
  fifo.ack(p);
  fifo.take_ready(kQueue);

  events_mask(p);
  test.check("send on a masked port works", evtchn::send(p), 0);
  test.check("  it is pending and masked, not linked", fifo.flags(p), kPending | kMasked);
  test.check("  queue 2 not READY", fifo.ready(kQueue), false);
  test.check("EVTCHNOP_unmask links it", events_unmask(p) == 0 && fifo.flags(p) == (kPending | kLinked), true);
  test.check("  as HEAD, READY", fifo.head(kQueue) == p && fifo.ready(kQueue), true);
  test.check("  taken", events_fifo_take(kQueue, more) == p && !more, true);
  fifo.ack(p);
  fifo.take_ready(kQueue);

  test.check("set_priority 0 (the highest) works", set_priority(q, EVTCHN_FIFO_PRIORITY_MAX), 0);
  test.check("send then links into queue 0", evtchn::send(q) == 0 && fifo.head(0) == q && fifo.ready(0), true);
  test.check("  taken from queue 0", events_fifo_take(0, more) == q && !more, true);
  fifo.ack(q);
  fifo.take_ready(0);
  events_mask(q);
  evtchn::send(q);
  test.check("a masked pending port", fifo.flags(q), kPending | kMasked);
  test.check("  closed", evtchn::close(q), 0);
  test.check("  loses its PENDING", fifo.flags(q), kMasked);
}

// An interdomain channel to ourselves: the bind marks the new port pending (as Xen does), and
// a send on the other end reaches its word.
void interdomain(SelfTest& test, Fifo& fifo) {
  evtchn_port_t remote = 0, local = 0;
  test.check("an interdomain channel to ourselves",
             evtchn::alloc_unbound(DOMID_SELF, DOMID_SELF, remote) == 0 &&
                 evtchn::bind_interdomain(DOMID_SELF, remote, local) == 0,
             true);
  test.check("  its new port is pending in its word", (fifo.flags(local) & kPending) != 0, true);
  events_mask(local);
  fifo.ack(local);
  test.check("  a send on the other end works", evtchn::send(remote), 0);
  test.check("  and reaches the word (pending, masked)", fifo.flags(local) & (kPending | kMasked), kPending | kMasked);
  test.check("  both ends closed", evtchn::close(local) == 0 && evtchn::close(remote) == 0, true);
}

volatile unsigned handled;
void on_ipi(uint32_t) { handled = handled + 1; }

// The kernel's own upcall, now draining the queues: an IPI's handler, and the timer.
void delivery(SelfTest& test, Fifo& fifo, evtchn_port_t p) {
  test.check("the kernel attaches a handler to the IPI port", events_attach(p, on_ipi), true);
  test.check("send on it works", evtchn::send(p), 0);
  pv::ops.enable_events();
  xen::sched_op(SCHEDOP_yield, nullptr);
  pv::ops.disable_events();
  test.check("  the upcall took it from queue 2 to its handler", handled, 1);
  test.check("  and acknowledged it (neither pending nor linked)", fifo.flags(p), 0);
  test.check("the timer's VIRQ arrives through the queues (events while sleeping 2 ms)",
             sleep_until(system_time_ns() + 2'000'000) > 0, true);
  events_detach(p);
}
}  // namespace

void selftest_evtchn_fifo(SelfTest& test) {
  Fifo fifo;
  fifo.control_pfn = allocate_zeroed_frame();
  fifo.control_mfn = pfn_to_mfn(fifo.control_pfn);
  fifo.control = reinterpret_cast<evtchn_fifo_control_block*>(pfn_to_va(fifo.control_pfn) + kControlOffset);
  fifo.array_pfn = allocate_zeroed_frame();
  fifo.array_mfn = pfn_to_mfn(fifo.array_pfn);
  fifo.words = reinterpret_cast<event_word_t*>(pfn_to_va(fifo.array_pfn));
  fifo.spare_mfn = new_page_table_frame();  // zeroed, mapped read-only here

  evtchn_port_t unbound = 0, closed = 0, p = 0, q = 0;
  test.check("an unbound port to ourselves", evtchn::alloc_unbound(DOMID_SELF, DOMID_SELF, unbound), 0);
  test.check("two IPI ports", evtchn::bind_ipi(0, p) == 0 && evtchn::bind_ipi(0, q) == 0, true);
  test.check("a port bound and closed",
             evtchn::alloc_unbound(DOMID_SELF, DOMID_SELF, closed) == 0 && evtchn::close(closed) == 0, true);
  events_mask(p);
  events_mask(q);
  test.check("a masked IPI port made pending under the 2-level ABI", evtchn::send(p), 0);
  before_init(test, fifo, unbound);

  // A fresh event array masks what the kernel has masked (the timer's port stays unmasked).
  for (evtchn_port_t port = 0; port < 4096 / sizeof(event_word_t); ++port)
    fifo.words[port] = masked_2level(port) ? kMasked : 0;
  uint8_t link_bits = 0;
  test.check("init_control works", init_control(fifo.control_mfn.value, kControlOffset, 0, &link_bits), 0);
  events_use_fifo(fifo.control, fifo.words);
  test.check("  link_bits is 17", link_bits, EVTCHN_FIFO_LINK_BITS);
  test.check("a second init_control is -EINVAL", init_control(fifo.control_mfn.value, kControlOffset, 0), -XEN_EINVAL);
  test.check("  and for a vCPU the domain does not have still -ENOENT",
             init_control(fifo.control_mfn.value, kControlOffset, 1000), -XEN_ENOENT);
  control_frame_held(test, fifo);
  priorities(test, unbound, closed);
  array_pages(test, fifo);
  queues(test, fifo, p, q);
  interdomain(test, fifo);
  delivery(test, fifo, p);
  page_table_tests::check_audit(test);
}
}  // namespace kernel
