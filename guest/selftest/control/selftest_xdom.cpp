// Work across domains (issue 9): memory_op on behalf of a domain, event channels between
// domains, VIRQ_DOM_EXC, SCHEDOP_remote_shutdown, foreign page-table work, and the PV
// console ring of a domU. Expected values are Xen 4.17's (xen/common/memory.c,
// event_channel.c, sched/core.c, xen/arch/x86/mm.c):
//
// selftest=xdom-self, dom0 alone (ours and Xen 4.17):
//  - populate_physmap / decrease_reservation on itself: frames counted in
//    current_reservation and physinfo's free_pages and back, the M2P entry of a populated
//    frame, order 1 (aligned pairs), a frame still mapped when it is given back (freed with
//    its last mapping), frames written and given back read as zeros when populated again,
//    at once (zeroed when handed out) and after an idle sleep (scrubbed while idle: our
//    counters say which; ours only, Xen scrubs only a dying domain's), hostile extent lists (unmapped, in the
//    hypervisor's range), too many extents, an order too large, a frame that does not exist: Xen's partial count (0),
//    never an error; the continuation's start extent in the command word; the reservation queries' -EINVAL / -ESRCH;
//  - set_memory_map / memory_map: -ENOSYS before a map is set, the map read back (whole and
//    cut short), more than E820MAX entries -EINVAL, no such domain -ESRCH, bad buffers -EFAULT;
//  - event channels within dom0: alloc_unbound with remote DOMID_SELF, bind_interdomain to
//    it, the new port pending at once, send both ways, status of both ends, close (the other
//    end unbound again, its pending bit gone), sends on closed and VIRQ ports -EINVAL, binding
//    what is not unbound for us -EINVAL, no such domain -ESRCH; ports counted before/after;
//    ports existing in Xen's buckets of 64 (status past them -EINVAL, a new bucket when every
//    port is taken, kept when its ports close);
//  - SCHEDOP_remote_shutdown of no domain -ESRCH; mmu_update / mmuext_op naming a table owner
//    or page owner that does not exist -ESRCH.
//
// selftest=xdom-domu, dom0 beside domain 1 (ours only: Xen 4.17 builds no domU at boot):
//  - populate beyond the domU's max_mem (0: Xen's partial count), then within a raised
//    max_mem (the partial count where it ends), order 1, a long list (preempted and
//    continued), a frame given back while dom0 maps it, decrease of frames the domU does not
//    own; free_pages and the domU's reservation back at the end;
//  - the builder's page-table work in domain 1: a fresh frame written through mmu_update with
//    pt_dom, pinned as an L1 with mmuext_op on domain 1's behalf, its entries updated, a frame
//    the domU does not own refused as table and as mapped frame, a frame with a bad entry
//    refused as L1, base pointers -EPERM, MMU_MACHPHYS_UPDATE for domain 1's frame (and -EPERM
//    with pt_dom), unpinned and given back;
//  - an event channel allocated in domain 1 for dom0 and bound by dom0: events both ways with
//    the domU's companion (selftest=xdom-peer), closed by dom0 (the domU's end unbound again);
//    domain 1's ports counted before/after;
//  - at last SCHEDOP_remote_shutdown of domain 1 (waiting in selftest=xdom-wait), seen in
//    getdomaininfo, and VIRQ_DOM_EXC pending on dom0's port.
//
// selftest=xdom-peer, in domain 1: every cross-domain call on dom0 refused as Xen refuses it
// (-EPERM / -ESRCH, the reservation calls' 0), then the event exchange with dom0, then a
// console ring with garbage indexes (the hypervisor skips the garbage, the console goes on).
#define __XEN_TOOLS__ 1
#include <stdint.h>
#include <xen/xen.h>
#include <xen/domctl.h>
#include <xen/sysctl.h>
#include <xen/io/console.h>

#include "arch/hypercall.h"
#include "arch/xen.h"
#include "kernel/boot/boot_info.h"
#include "kernel/console/console.h"
#include "arch/control.h"
#include "arch/event_channel_ops.h"
#include "kernel/events/events.h"
#include "kernel/memory/page_allocator.h"
#include "kernel/memory/physical_memory.h"
#include "selftest/control/control_selftests.h"
#include "selftest/memory/memory_selftests.h"
#include "pv-kernel-patches/shared_info.h"
#include "kernel/events/time.h"
#include "kernel/events/timer.h"

namespace kernel {
namespace {
using control::free_pages;
constexpr uint64_t kUnmappedUser = 0x0000000010000000ull;
constexpr uint64_t kHypervisorRange = 0xffff830000000000ull;
constexpr domid_t kAbsent = 5;
constexpr domid_t kDomU = 1;
constexpr uint64_t kPresent = 1, kRw = 2, kAccessed = 0x20;
constexpr uint64_t kInvalidM2p = ~0ull;

void sleep_ms(uint64_t ms) { sleep_until(system_time_ns() + ms * 1'000'000); }

// ------------------------------------------------------------------------------------------
// memory_op

long reservation(unsigned op, domid_t domain, xen_pfn_t* list, uint64_t count, unsigned order = 0,
                 uint64_t start_extent = 0) {
  xen_memory_reservation_t r{};
  set_xen_guest_handle(r.extent_start, list);
  r.nr_extents = count;
  r.extent_order = order;
  r.domid = domain;
  return arch::hypercall(__HYPERVISOR_memory_op, op | (start_extent << 6), arch::arg(&r));
}
long reservation_at(unsigned op, domid_t domain, uint64_t list, uint64_t count, unsigned order = 0) {
  return reservation(op, domain, reinterpret_cast<xen_pfn_t*>(list), count, order);
}
long populate(domid_t d, xen_pfn_t* list, uint64_t n, unsigned order = 0) {
  return reservation(XENMEM_populate_physmap, d, list, n, order);
}
long decrease(domid_t d, xen_pfn_t* list, uint64_t n, unsigned order = 0) {
  return reservation(XENMEM_decrease_reservation, d, list, n, order);
}
long query(unsigned op, domid_t domain, uint64_t start_extent = 0) {
  domid_t d = domain;
  return arch::hypercall(__HYPERVISOR_memory_op, op | (start_extent << 6), arch::arg(&d));
}
long current_pages(domid_t d) { return query(XENMEM_current_reservation, d); }

long max_mem_pages(domid_t domain, uint64_t pages) { return control::max_mem(domain, pages * 4); }

uint64_t m2p(uint64_t mfn) { return machine_to_phys_mapping[mfn]; }

// A performance counter of ours by name (sysctl perfc_op), -1 if there is none.
long perf_counter(const char* wanted) {
  static xen_sysctl_perfc_desc_t desc[64];
  static xen_sysctl_perfc_val_t val[64];
  xen_sysctl_t op{};
  op.cmd = XEN_SYSCTL_perfc_op;
  op.interface_version = XEN_SYSCTL_INTERFACE_VERSION;
  op.u.perfc_op.cmd = XEN_SYSCTL_PERFCOP_query;
  if (arch::hypercall(__HYPERVISOR_sysctl, arch::arg(&op)) != 0 || op.u.perfc_op.nr_counters > 64) return -1;
  set_xen_guest_handle(op.u.perfc_op.desc, desc);
  set_xen_guest_handle(op.u.perfc_op.val, val);
  if (arch::hypercall(__HYPERVISOR_sysctl, arch::arg(&op)) != 0) return -1;
  for (unsigned i = 0; i < op.u.perfc_op.nr_counters; ++i) {
    unsigned c = 0;
    while (wanted[c] && desc[i].name[c] == wanted[c]) ++c;
    if (!wanted[c] && !desc[i].name[c]) return long(val[i]);
  }
  return -1;
}

// One mmu_update with an explicit foreigndom.
long mmu_update_as(uint64_t ptr, uint64_t value, uint32_t foreigndom) {
  mmu_update_t request{ptr, value};
  unsigned done = 0;
  return arch::hypercall(__HYPERVISOR_mmu_update, arch::arg(&request), 1, arch::arg(&done), foreigndom);
}
// The same, with its done count (7 before the call, so one left alone shows).
long mmu_update_counted(uint64_t ptr, uint64_t value, uint32_t foreigndom, unsigned& done) {
  mmu_update_t request{ptr, value};
  done = 7;
  return arch::hypercall(__HYPERVISOR_mmu_update, arch::arg(&request), 1, arch::arg(&done), foreigndom);
}
long mmuext_as(unsigned cmd, uint64_t mfn, domid_t foreigndom) {
  mmuext_op_t op{};
  op.cmd = cmd;
  op.arg1.mfn = mfn;
  unsigned done = 0;
  return arch::hypercall(__HYPERVISOR_mmuext_op, arch::arg(&op), 1, arch::arg(&done), foreigndom);
}

// The scratch page's L1 slot maps `mfn` read-only for the duration of `use`, through
// mmu_update with `foreigndom` = the frame's owner; restored after.
template <typename Use>
long with_mapping(uint64_t mfn, uint32_t foreigndom, Use use) {
  pv::PageTableSlot slot = scratch_slot();
  uint64_t before = read_entry(slot).raw();
  long rc = mmu_update_as(slot.machine_address, (mfn << 12) | kPresent | kAccessed, foreigndom);
  if (rc == 0) use();
  long restored = mmu_update_as(slot.machine_address, before, DOMID_SELF);
  return rc ? rc : restored;
}

void memory_self_frames(SelfTest& test) {
  const long pages = current_pages(DOMID_SELF), free_before = free_pages();
  const xen_pfn_t gpfn = boot_info.nr_pages + 64;  // a pseudo-physical frame beyond our memory
  xen_pfn_t list[2] = {gpfn, 0};
  test.check("populate_physmap of one frame for DOMID_SELF: 1 extent", populate(DOMID_SELF, list, 1), 1);
  const uint64_t mfn = list[0];
  test.check("... the MFN written back over the gpfn", mfn != gpfn, true);
  test.check("... the M2P maps it to the gpfn", long(m2p(mfn)), long(gpfn));
  test.check("... current_reservation grew by 1", current_pages(DOMID_SELF), pages + 1);
  test.check("... free_pages dropped by 1", free_pages(), free_before - 1);
  test.check("decrease_reservation of it: 1 extent", decrease(DOMID_SELF, list, 1), 1);
  test.check("... current_reservation back", current_pages(DOMID_SELF), pages);
  test.check("... free_pages back", free_pages(), free_before);

  list[0] = 0;
  test.check("increase_reservation of one frame: 1 extent",
             reservation(XENMEM_increase_reservation, DOMID_SELF, list, 1), 1);
  test.check("... its MFN written to the list", list[0] != 0, true);
  test.check("... current_reservation grew by 1", current_pages(DOMID_SELF), pages + 1);
  test.check("... given back", decrease(DOMID_SELF, list, 1), 1);
  test.check("... current_reservation back", current_pages(DOMID_SELF), pages);

  list[0] = gpfn;
  test.check("populate_physmap of order 1: 1 extent", populate(DOMID_SELF, list, 1, 1), 1);
  test.check("... an aligned pair", long(list[0] & 1), 0);
  test.check("... the M2P of the second frame", long(m2p(list[0] + 1)), long(gpfn + 1));
  test.check("... current_reservation grew by 2", current_pages(DOMID_SELF), pages + 2);
  test.check("decrease_reservation of order 1: 1 extent", decrease(DOMID_SELF, list, 1, 1), 1);
  test.check("... current_reservation back", current_pages(DOMID_SELF), pages);

  // Given back while mapped: it leaves the reservation only when its last mapping goes.
  list[0] = gpfn;
  test.check("populate one frame to map", populate(DOMID_SELF, list, 1), 1);
  long given_back = -1, held = -1;
  long mapped = with_mapping(list[0], DOMID_SELF, [&] {
    given_back = decrease(DOMID_SELF, list, 1);
    held = current_pages(DOMID_SELF);
  });
  test.check("... mapped, then unmapped", mapped, 0);
  test.check("... decrease_reservation while mapped: 1 extent", given_back, 1);
  test.check("... still counted while mapped", held, pages + 1);
  test.check("... gone with its mapping", current_pages(DOMID_SELF), pages);
  test.check("... free_pages back", free_pages(), free_before);
}

// `mfn` of ours at the scratch page for the duration of `use(bytes)`, writable or not, through
// update_va_mapping with UVMF_INVLPG (so no stale translation is used); restored after.
template <typename Use>
long with_frame_at_scratch(uint64_t mfn, bool writable, Use use) {
  pv::PageTableSlot slot = scratch_slot();
  const uint64_t before = read_entry(slot).raw(), va = scratch_va();
  const uint64_t entry = (mfn << 12) | kPresent | kAccessed | (writable ? kRw : 0);
  long rc = arch::hypercall(__HYPERVISOR_update_va_mapping, va, entry, UVMF_INVLPG);
  if (rc == 0) use(reinterpret_cast<volatile uint8_t*>(va));
  long restored = arch::hypercall(__HYPERVISOR_update_va_mapping, va, before, UVMF_INVLPG);
  return rc ? rc : restored;
}
bool fill_frame(uint64_t mfn, uint8_t byte) {
  return with_frame_at_scratch(mfn, true, [byte](volatile uint8_t* bytes) {
           for (unsigned i = 0; i < 4096; ++i) bytes[i] = byte;
         }) == 0;
}
bool frame_is_zero(uint64_t mfn) {
  bool zero = false;
  long rc = with_frame_at_scratch(mfn, false, [&zero](volatile uint8_t* bytes) {
    uint8_t any = 0;
    for (unsigned i = 0; i < 4096; ++i) any |= bytes[i];
    zero = any == 0;
  });
  return rc == 0 && zero;
}

// Frames given back hold what their owner wrote into them; on ours whoever gets them next
// finds zeros, whether the hypervisor scrubbed them while it was idle (as Xen's
// scrub_free_pages) or zeroes them when it hands them out, and our counters
// (frames_scrubbed_idle, frames_zeroed_when_allocated) say which way each took. Xen 4.17
// scrubs only what a dying domain leaves (free_domheap_pages): a frame a running domain gives
// back may come back with its contents, so there (no such counters) only the reservation's
// counts are checked.
void memory_self_scrub(SelfTest& test) {
  constexpr unsigned kFrames = 8;
  const xen_pfn_t first_gpfn = boot_info.nr_pages + 128;
  xen_pfn_t list[kFrames];
  auto written_and_given_back = [&](uint8_t byte) {
    for (unsigned i = 0; i < kFrames; ++i) list[i] = first_gpfn + i;
    if (populate(DOMID_SELF, list, kFrames) != long(kFrames)) return false;
    bool filled = true;
    for (xen_pfn_t mfn : list) filled = fill_frame(mfn, byte) && filled;
    return decrease(DOMID_SELF, list, kFrames) == long(kFrames) && filled;
  };
  auto populated_zero = [&] {
    for (unsigned i = 0; i < kFrames; ++i) list[i] = first_gpfn + i;
    if (populate(DOMID_SELF, list, kFrames) != long(kFrames)) return false;
    bool zero = true;
    for (xen_pfn_t mfn : list) zero = frame_is_zero(mfn) && zero;
    return decrease(DOMID_SELF, list, kFrames) == long(kFrames) && zero;
  };
  const long free_before = free_pages();
  const bool ours = perf_counter("frames_zeroed_when_allocated") >= 0;

  test.check("8 frames populated, filled with 0xa5 and given back", written_and_given_back(0xa5), true);
  const long zeroed_before = perf_counter("frames_zeroed_when_allocated");
  const bool zero_at_once = populated_zero();
  if (ours) {
    test.check("... populated again at once: they read as zeros", zero_at_once, true);
    test.check("... zeroed when handed out (no idle time to scrub them)",
               perf_counter("frames_zeroed_when_allocated") - zeroed_before >= long(kFrames), true);
  }

  test.check("8 frames filled with 0x5a and given back", written_and_given_back(0x5a), true);
  const long scrubbed_before = perf_counter("frames_scrubbed_idle");
  sleep_ms(20);  // dom0 blocks: the CPU is idle
  const long scrubbed = perf_counter("frames_scrubbed_idle"), zeroed = perf_counter("frames_zeroed_when_allocated");
  const bool zero_after_sleep = populated_zero();
  if (ours) {
    test.check("... while dom0 slept the hypervisor scrubbed free frames", scrubbed - scrubbed_before >= long(kFrames),
               true);
    test.check("... populated again after the sleep: zeros", zero_after_sleep, true);
    test.check("... found scrubbed: none zeroed when handed out", perf_counter("frames_zeroed_when_allocated"), zeroed);
  }
  test.check("... free_pages back", free_pages(), free_before);
}

void memory_self_hostile(SelfTest& test) {
  const long pages = current_pages(DOMID_SELF), free_before = free_pages();
  xen_pfn_t list[2] = {boot_info.nr_pages + 64, boot_info.nr_pages + 65};
  test.check("populate from an unmapped extent list: 0 extents",
             reservation_at(XENMEM_populate_physmap, DOMID_SELF, kUnmappedUser, 1), 0);
  test.check("populate from a list in the hypervisor's range: 0",
             reservation_at(XENMEM_populate_physmap, DOMID_SELF, kHypervisorRange, 1), 0);
  test.check("populate from a null list: 0", reservation_at(XENMEM_populate_physmap, DOMID_SELF, 0, 1), 0);
  test.check("decrease from an unmapped list: 0",
             reservation_at(XENMEM_decrease_reservation, DOMID_SELF, kUnmappedUser, 1), 0);
  test.check("populate of 2^26 extents (no continuation can encode them): 0", populate(DOMID_SELF, list, 1ull << 26),
             0);
  test.check("populate of order 19 (beyond the control domain's 18): 0", populate(DOMID_SELF, list, 1, 19), 0);
  test.check("populate of no extent: 0", populate(DOMID_SELF, list, 0), 0);
  long max_ram_page = xen::memory_op(XENMEM_maximum_ram_page, nullptr);
  xen_pfn_t absent[1] = {xen_pfn_t(max_ram_page + 16)};
  test.check("decrease of a frame beyond RAM: 0", decrease(DOMID_SELF, absent, 1), 0);
  test.check("... nothing taken or given", current_pages(DOMID_SELF), pages);
  test.check("... free_pages unchanged", free_pages(), free_before);

  // A continuation: the start extent above the command's 6 bits.
  test.check("populate continuing at extent 1 of 2: answers 2",
             reservation(XENMEM_populate_physmap, DOMID_SELF, list, 2, 0, 1), 2);
  test.check("... extent 0 untouched", long(list[0]), long(boot_info.nr_pages + 64));
  test.check("... one frame taken", current_pages(DOMID_SELF), pages + 1);
  test.check("decrease continuing at extent 1 of 2: answers 2",
             reservation(XENMEM_decrease_reservation, DOMID_SELF, list, 2, 0, 1), 2);
  test.check("a start extent beyond the list: answered as is",
             reservation(XENMEM_populate_physmap, DOMID_SELF, list, 2, 0, 5), 5);
  test.check("... nothing left taken", current_pages(DOMID_SELF), pages);

  test.check("current_reservation with a start extent: -EINVAL", query(XENMEM_current_reservation, DOMID_SELF, 1),
             -XEN_EINVAL);
  test.check("current_reservation of no domain: -ESRCH", current_pages(kAbsent), -XEN_ESRCH);
  test.check("maximum_reservation of no domain: -ESRCH", query(XENMEM_maximum_reservation, kAbsent), -XEN_ESRCH);
}

struct __attribute__((packed)) E820Entry {
  uint64_t address, size;
  uint32_t type;
};

long set_map(domid_t domain, const E820Entry* entries, unsigned count) {
  xen_foreign_memory_map_t request{};
  request.domid = domain;
  request.map.nr_entries = count;
  set_xen_guest_handle(request.map.buffer, const_cast<E820Entry*>(entries));
  return xen::memory_op(XENMEM_set_memory_map, &request);
}
long get_map(E820Entry* entries, unsigned& count) {
  xen_memory_map_t request{};
  request.nr_entries = count;
  set_xen_guest_handle(request.buffer, entries);
  long rc = xen::memory_op(XENMEM_memory_map, &request);
  count = request.nr_entries;
  return rc;
}

void memory_self_map(SelfTest& test) {
  E820Entry read[8] = {};
  unsigned count = 8;
  long before = get_map(read, count);
  test.note("XENMEM_memory_map before any set_memory_map", before);
  const E820Entry map[2] = {{0, 0x9f000, 1}, {0x100000, boot_info.nr_pages * 4096 - 0x100000, 1}};
  test.check("set_memory_map of DOMID_SELF, 2 entries", set_map(DOMID_SELF, map, 2), 0);
  count = 8;
  test.check("memory_map reads it back", get_map(read, count), 0);
  test.check("... 2 entries", count, 2);
  test.check("... as set", read[1].address == map[1].address && read[1].size == map[1].size && read[1].type == 1, true);
  count = 1;
  read[1] = E820Entry{};
  test.check("memory_map with room for 1", get_map(read, count), 0);
  test.check("... 1 entry reported, none beyond it written", count == 1 && read[1].size == 0, true);
  test.check("set_memory_map of 1025 entries (beyond E820MAX): -EINVAL", set_map(DOMID_SELF, map, 1025), -XEN_EINVAL);
  test.check("set_memory_map of no domain: -ESRCH", set_map(kAbsent, map, 2), -XEN_ESRCH);
  test.check("set_memory_map from an unmapped buffer: -EFAULT",
             set_map(DOMID_SELF, reinterpret_cast<const E820Entry*>(kUnmappedUser), 2), -XEN_EFAULT);
  count = 8;
  test.check("memory_map into an unmapped buffer: -EFAULT", get_map(reinterpret_cast<E820Entry*>(kUnmappedUser), count),
             -XEN_EFAULT);
  test.check("memory_map from an unmapped request: -EFAULT",
             arch::hypercall(__HYPERVISOR_memory_op, XENMEM_memory_map, kUnmappedUser), -XEN_EFAULT);
}

// ------------------------------------------------------------------------------------------
// Event channels

using evtchn::alloc_unbound;
using evtchn::bind_interdomain;
using evtchn::close;
using evtchn::send;
using evtchn::status;
// Ports of `dom` in use among the first 128 (Xen answers -EINVAL beyond its allocated buckets).
long ports_in_use(domid_t dom) {
  long count = 0;
  for (evtchn_port_t port = 1; port < 128; ++port) {
    evtchn_status_t s;
    if (status(dom, port, s) == 0 && s.status != EVTCHNSTAT_closed) ++count;
  }
  return count;
}
evtchn_port_t find_port(domid_t dom, uint32_t state) {
  for (evtchn_port_t port = 1; port < 128; ++port) {
    evtchn_status_t s;
    if (status(dom, port, s) == 0 && s.status == state) return port;
  }
  return 0;
}

constexpr unsigned kBits = sizeof(xen_ulong_t) * 8;
bool pending(evtchn_port_t port) {
  return (__atomic_load_n(&shared_info()->evtchn_pending[port / kBits], __ATOMIC_SEQ_CST) >> (port % kBits)) & 1;
}
void clear_pending(evtchn_port_t port) {
  __atomic_fetch_and(&shared_info()->evtchn_pending[port / kBits], ~(xen_ulong_t{1} << (port % kBits)),
                     __ATOMIC_SEQ_CST);
}

void expect_interdomain(SelfTest& test, const char* what, domid_t dom, evtchn_port_t port, domid_t remote,
                        evtchn_port_t remote_port) {
  evtchn_status_t s;
  long rc = status(dom, port, s);
  test.check(what,
             rc == 0 && s.status == EVTCHNSTAT_interdomain && s.u.interdomain.dom == remote &&
                 s.u.interdomain.port == remote_port && s.vcpu == 0,
             true);
}
void expect_unbound(SelfTest& test, const char* what, domid_t dom, evtchn_port_t port, domid_t remote) {
  evtchn_status_t s;
  long rc = status(dom, port, s);
  test.check(what, rc == 0 && s.status == EVTCHNSTAT_unbound && s.u.unbound.dom == remote, true);
}

void events_self(SelfTest& test) {
  const long in_use = ports_in_use(DOMID_SELF);
  test.note("ports in use", in_use);
  evtchn_port_t a = 0, b = 0, c = 0;
  test.check("alloc_unbound in DOMID_SELF for DOMID_SELF", alloc_unbound(DOMID_SELF, DOMID_SELF, a), 0);
  events_mask(a);
  expect_unbound(test, "... status: unbound, waiting for domain 0", DOMID_SELF, a, 0);
  test.check("bind_interdomain to it (a domain may bind to itself)", bind_interdomain(DOMID_SELF, a, b), 0);
  events_mask(b);
  test.check("... the new port is pending at once (Xen's lost-notification fix-up)", pending(b), true);
  expect_interdomain(test, "... status of the first end: interdomain to the second", DOMID_SELF, a, 0, b);
  expect_interdomain(test, "... status of the second end: interdomain to the first", DOMID_SELF, b, 0, a);
  clear_pending(a);
  clear_pending(b);
  test.check("send on the second end", send(b), 0);
  test.check("... the first end is pending", pending(a), true);
  test.check("... not the second", pending(b), false);
  test.check("send on the first end", send(a), 0);
  test.check("... the second end is pending", pending(b), true);
  test.check("close the first end", close(a), 0);
  test.check("... its pending bit went with it", pending(a), false);
  expect_unbound(test, "... the second end is unbound, waiting for us again", DOMID_SELF, b, 0);
  clear_pending(b);
  test.check("send on the unbound end: dropped silently", send(b), 0);
  test.check("send on the closed port: -EINVAL", send(a), -XEN_EINVAL);
  test.check("close it again: -EINVAL", close(a), -XEN_EINVAL);
  test.check("bind_interdomain to the unbound end again", bind_interdomain(DOMID_SELF, b, c), 0);
  events_mask(c);
  expect_interdomain(test, "... connected", DOMID_SELF, b, 0, c);
  test.check("close both", close(c) == 0 && close(b) == 0, true);
  clear_pending(b);
  clear_pending(c);

  evtchn_port_t virq = find_port(DOMID_SELF, EVTCHNSTAT_virq), unused = 0;
  test.check("a VIRQ port is bound (the timer's)", virq != 0, true);
  test.check("bind_interdomain to a VIRQ port (not unbound): -EINVAL", bind_interdomain(DOMID_SELF, virq, unused),
             -XEN_EINVAL);
  test.check("bind_interdomain to a closed port: -EINVAL", bind_interdomain(DOMID_SELF, a, unused), -XEN_EINVAL);
  test.check("bind_interdomain to port 4095: -EINVAL", bind_interdomain(DOMID_SELF, 4095, unused), -XEN_EINVAL);
  test.check("bind_interdomain to no domain: -ESRCH", bind_interdomain(kAbsent, 1, unused), -XEN_ESRCH);
  test.check("alloc_unbound in no domain: -ESRCH", alloc_unbound(kAbsent, 0, unused), -XEN_ESRCH);
  evtchn_status_t s;
  test.check("status in no domain: -ESRCH", status(kAbsent, 1, s), -XEN_ESRCH);
  test.check("status of port 0: closed", status(DOMID_SELF, 0, s) == 0 && s.status == EVTCHNSTAT_closed, true);
  test.check("send on a VIRQ port: -EINVAL", send(virq), -XEN_EINVAL);
  test.check("alloc_unbound from an unmapped request: -EFAULT",
             arch::hypercall(__HYPERVISOR_event_channel_op, EVTCHNOP_alloc_unbound, kUnmappedUser), -XEN_EFAULT);
  evtchn_bind_virq_t exc{};
  exc.virq = VIRQ_DOM_EXC;
  test.check("bind VIRQ_DOM_EXC", xen::event_channel_op(EVTCHNOP_bind_virq, &exc), 0);
  test.check("... and close it", close(exc.port), 0);
  test.check("ports in use: as before", ports_in_use(DOMID_SELF), in_use);
}

// Xen keeps ports in buckets of 64 and has a port only inside the buckets it allocated: one
// at creation, the next when every port before is taken, none freed while the domain lives.
// So EVTCHNOP_status of the first port past them is -EINVAL, of the last one in them closed.
evtchn_port_t ports_existing(domid_t dom) {
  constexpr evtchn_port_t kBucket = 64, kLimit = 4096;
  evtchn_port_t end = 0;
  evtchn_status_t s;
  while (end < kLimit && status(dom, end + kBucket - 1, s) == 0) end += kBucket;
  return end;
}

void event_buckets_self(SelfTest& test) {
  const evtchn_port_t end = ports_existing(DOMID_SELF);
  const long in_use = ports_in_use(DOMID_SELF);
  evtchn_status_t s;
  test.check("dom0's ports exist in whole buckets of 64", end > 0 && end % 64 == 0 && status(DOMID_SELF, end, s) != 0,
             true);
  test.check("... the first port past them: -EINVAL", status(DOMID_SELF, end, s), -XEN_EINVAL);
  constexpr unsigned kMaxTaken = 256;
  evtchn_port_t taken[kMaxTaken];
  unsigned count = 0;
  evtchn_port_t port = 0;
  while (count < kMaxTaken && alloc_unbound(DOMID_SELF, DOMID_SELF, port) == 0) {
    taken[count++] = port;
    if (port >= end) break;
  }
  test.check("when every port of them is taken, the next is the first of a new bucket", port, end);
  test.check("... whose last port exists", status(DOMID_SELF, end + 63, s) == 0 && s.status == EVTCHNSTAT_closed, true);
  test.check("... and no port past it", status(DOMID_SELF, end + 64, s), -XEN_EINVAL);
  bool closed = true;
  for (unsigned i = 0; i < count; ++i) closed = close(taken[i]) == 0 && closed;
  test.check("the ports taken close", closed, true);
  test.check("the new bucket stays when its ports are closed", status(DOMID_SELF, end + 63, s), 0);
  test.check("... and no other appears", status(DOMID_SELF, end + 64, s), -XEN_EINVAL);
  test.check("ports in use: as before", ports_in_use(DOMID_SELF), in_use);
}

long remote_shutdown(domid_t domain, unsigned reason) {
  sched_remote_shutdown_t request{domain, reason};
  return xen::sched_op(SCHEDOP_remote_shutdown, &request);
}

void foreign_self(SelfTest& test) {
  test.check("SCHEDOP_remote_shutdown of no domain: -ESRCH", remote_shutdown(kAbsent, SHUTDOWN_poweroff), -XEN_ESRCH);
  test.check("SCHEDOP_remote_shutdown from an unmapped request: -EFAULT",
             arch::hypercall(__HYPERVISOR_sched_op, SCHEDOP_remote_shutdown, kUnmappedUser), -XEN_EFAULT);
  pv::PageTableSlot slot = scratch_slot();
  uint64_t entry = read_entry(slot).raw();
  test.check("mmu_update naming our own tables as pt_dom (our id + 1)",
             mmu_update_as(slot.machine_address, entry, (1u << 16) | DOMID_SELF), 0);
  // As Xen's do_mmu_update: a table owner that does not exist is refused before the done count
  // is written, a page owner that does not exist after (done = 0).
  unsigned done = 0;
  test.check("mmu_update naming the tables of no domain: -ESRCH",
             mmu_update_counted(slot.machine_address, entry, uint32_t(kAbsent + 1) << 16 | DOMID_SELF, done),
             -XEN_ESRCH);
  test.check("... its done count left alone", done, 7);
  test.check("mmu_update naming no domain as page owner: -ESRCH",
             mmu_update_counted(slot.machine_address, entry, kAbsent, done), -XEN_ESRCH);
  test.check("... its done count 0", done, 0);
  test.check("mmuext_op on behalf of no domain: -ESRCH", mmuext_as(MMUEXT_TLB_FLUSH_LOCAL, 0, kAbsent), -XEN_ESRCH);
  test.check("... the entry unchanged", long(read_entry(slot).raw() == entry), 1);
}
// ------------------------------------------------------------------------------------------
// dom0 beside domain 1

// The domU's memory: refused beyond max_mem, then taken and given back within a raised one.
void memory_domu(SelfTest& test) {
  const long pages = current_pages(kDomU), max_pages = query(XENMEM_maximum_reservation, kDomU);
  const long free_before = free_pages();
  test.note("domain 1's pages", pages);
  test.check("domain 1 holds its max_mem at boot", pages, max_pages);
  static xen_pfn_t list[2048];
  for (unsigned i = 0; i < 2048; ++i) list[i] = xen_pfn_t(pages + i);
  test.check("populate_physmap for domain 1 beyond its max_mem: 0 extents", populate(kDomU, list, 1), 0);
  test.check("... free_pages unchanged", free_pages(), free_before);
  test.check("raise domain 1's max_mem by 4 pages", max_mem_pages(kDomU, pages + 4), 0);
  test.check("populate 6 extents: the 4 that fit (Xen's partial count)", populate(kDomU, list, 6), 4);
  test.check("... domain 1's current_reservation grew by 4", current_pages(kDomU), pages + 4);
  test.check("... free_pages dropped by 4", free_pages(), free_before - 4);
  test.check("... the M2P maps them to domain 1's gpfns", m2p(list[3]) == uint64_t(pages + 3), true);
  test.check("... extents 4 and 5 untouched", list[4] == xen_pfn_t(pages + 4) && list[5] == xen_pfn_t(pages + 5), true);
  xen_pfn_t ours[1] = {pfn_to_mfn(Pfn{boot_info.nr_pages - 1}).value};
  test.check("decrease_reservation of domain 1 naming a frame of dom0's: 0", decrease(kDomU, ours, 1), 0);
  test.check("... dom0's frame still dom0's", current_pages(DOMID_SELF), long(boot_info.start_info->nr_pages));
  test.check("decrease_reservation of the 4: 4 extents", decrease(kDomU, list, 4), 4);
  test.check("... domain 1's reservation back", current_pages(kDomU), pages);
  test.check("... free_pages back", free_pages(), free_before);

  // Order 1 within the raised max_mem, and a frame given back while dom0 maps it.
  list[0] = xen_pfn_t(pages);
  test.check("populate order 1 for domain 1", populate(kDomU, list, 1, 1), 1);
  test.check("decrease it", decrease(kDomU, list, 1, 1), 1);
  list[0] = xen_pfn_t(pages);
  test.check("populate one frame for domain 1 to map", populate(kDomU, list, 1), 1);
  long given_back = -1, held = -1;
  long mapped = with_mapping(list[0], kDomU, [&] {
    given_back = decrease(kDomU, list, 1);
    held = current_pages(kDomU);
  });
  test.check("... dom0 maps it with foreigndom 1, then unmaps it", mapped, 0);
  test.check("... decrease_reservation while dom0 maps it: 1", given_back, 1);
  test.check("... still counted while mapped", held, pages + 1);
  test.check("... gone with the mapping", current_pages(kDomU), pages);

  // A list long enough to be preempted: the call continues where it stopped. A timer due in
  // 100 us makes its interrupt pending while the calls run (a faster populate was once not
  // preempted at all). If the host held the machine back between setting it and the call, the
  // timer went off before: up to 5 tries, each one populating and giving back the whole list.
  test.check("raise domain 1's max_mem by 2048 pages", max_mem_pages(kDomU, pages + 2048), 0);
  for (unsigned i = 0; i < 2048; ++i) list[i] = xen_pfn_t(pages + i);
  const long continuations = perf_counter("hypercall_continuations");
  bool all_done = true, preempted = false;
  for (unsigned attempt = 0; attempt < 5 && all_done && !preempted; ++attempt) {
    const uint64_t start = system_time_ns();
    xen::set_timer(start + 100'000);
    all_done = populate(kDomU, list, 2048) == 2048;
    all_done = decrease(kDomU, list, 2048) == 2048 && all_done;
    test.note("... populating and giving back took (us)", long((system_time_ns() - start) / 1000));
    preempted = perf_counter("hypercall_continuations") > continuations && continuations >= 0;
  }
  test.check("populate 2048 extents for domain 1 and decrease them, each time", all_done, true);
  test.check("... preempted and continued on the way (hypercall_continuations grew)", preempted, true);
  test.check("... domain 1's reservation back", current_pages(kDomU), pages);
  test.check("... free_pages back", free_pages(), free_before);
  test.check("max_mem of domain 1 back", max_mem_pages(kDomU, pages), 0);
  test.check("... maximum_reservation back", query(XENMEM_maximum_reservation, kDomU), max_pages);
}

// The builder's page-table work in domain 1's memory.
void foreign_tables(SelfTest& test) {
  const long pages = current_pages(kDomU), free_before = free_pages();
  test.check("raise domain 1's max_mem by 3 pages", max_mem_pages(kDomU, pages + 3), 0);
  xen_pfn_t frames[3] = {xen_pfn_t(pages), xen_pfn_t(pages + 1), xen_pfn_t(pages + 2)};
  test.check("populate 3 frames for domain 1", populate(kDomU, frames, 3), 3);
  const uint64_t table = frames[0], data = frames[1], bad = frames[2];
  const uint32_t domu_tables = uint32_t(kDomU + 1) << 16 | kDomU;
  const uint64_t ro = kPresent | kAccessed, rw = ro | kRw;
  test.check("mmu_update with pt_dom 1 writes an entry into a fresh frame of domain 1",
             mmu_update_as(table << 12, (data << 12) | ro, domu_tables), 0);
  test.check("mmu_update with pt_dom 1 writes a bad entry (a frame far beyond RAM) into another",
             mmu_update_as(bad << 12, (data << 12) | ro | (1ull << 45), domu_tables), 0);
  // As Xen's get_page_from_l1e: a frame beyond RAM is I/O memory, which domain 1 may not map.
  test.check("pin the bad one as L1 on domain 1's behalf: -EPERM", mmuext_as(MMUEXT_PIN_L1_TABLE, bad, kDomU),
             -XEN_EPERM);
  test.check("... nor an L2 whose entry is no table", mmuext_as(MMUEXT_PIN_L2_TABLE, bad, kDomU), -XEN_EINVAL);
  test.check("pin the first as L1 on domain 1's behalf", mmuext_as(MMUEXT_PIN_L1_TABLE, table, kDomU), 0);
  test.check("... pinned twice: -EINVAL", mmuext_as(MMUEXT_PIN_L1_TABLE, table, kDomU), -XEN_EINVAL);
  test.check("update the pinned table: map domain 1's frame writable",
             mmu_update_as((table << 12) + 8, (data << 12) | rw, domu_tables), 0);
  uint64_t dom0_frame = pfn_to_mfn(Pfn{boot_info.nr_pages - 1}).value;
  test.check("... map dom0's frame there with page owner 1: -EBUSY",
             mmu_update_as((table << 12) + 16, (dom0_frame << 12) | ro, domu_tables), -XEN_EBUSY);
  test.check("... an entry in dom0's own frame with pt_dom 1 (not domain 1's): -EINVAL",
             mmu_update_as(dom0_frame << 12, 0, domu_tables), -XEN_EINVAL);
  test.check("pin dom0's frame on domain 1's behalf: -EINVAL", mmuext_as(MMUEXT_PIN_L1_TABLE, dom0_frame, kDomU),
             -XEN_EINVAL);
  test.check("load a base pointer on domain 1's behalf: -EPERM", mmuext_as(MMUEXT_NEW_BASEPTR, table, kDomU),
             -XEN_EPERM);
  test.check("a local flush on domain 1's behalf: -EPERM", mmuext_as(MMUEXT_TLB_FLUSH_LOCAL, 0, kDomU), -XEN_EPERM);
  test.check("MMU_MACHPHYS_UPDATE for domain 1's frame (page owner 1)",
             mmu_update_as((data << 12) | MMU_MACHPHYS_UPDATE, 0x1234, kDomU), 0);
  test.check("... the M2P says so", long(m2p(data)), 0x1234);
  test.check("... with pt_dom naming domain 1: -EPERM",
             mmu_update_as((data << 12) | MMU_MACHPHYS_UPDATE, 0x1235, domu_tables), -XEN_EPERM);
  test.check("... for a frame domain 1 does not own: -EINVAL",
             mmu_update_as((dom0_frame << 12) | MMU_MACHPHYS_UPDATE, 0x1235, kDomU), -XEN_EINVAL);
  test.check("unpin the table on domain 1's behalf", mmuext_as(MMUEXT_UNPIN_TABLE, table, kDomU), 0);
  test.check("... unpinned twice: -EINVAL", mmuext_as(MMUEXT_UNPIN_TABLE, table, kDomU), -XEN_EINVAL);
  test.check("give the 3 frames back", decrease(kDomU, frames, 3), 3);
  test.check("... domain 1's reservation back", current_pages(kDomU), pages);
  test.check("... free_pages back", free_pages(), free_before);
  test.check("max_mem of domain 1 back", max_mem_pages(kDomU, pages), 0);
}

// Polls `port`'s pending bit (masked, so no upcall takes it), blocking between looks.
bool wait_pending(evtchn_port_t port, unsigned ms) {
  for (unsigned waited = 0; waited < ms; waited += 5) {
    if (pending(port)) return true;
    sleep_ms(5);
  }
  return pending(port);
}

void events_domu(SelfTest& test, evtchn_port_t dom_exc) {
  const long domu_ports = ports_in_use(kDomU), our_ports = ports_in_use(DOMID_SELF);
  test.note("domain 1's ports in use", domu_ports);
  evtchn_port_t remote = 0, local = 0;
  test.check("alloc_unbound in domain 1 for dom0", alloc_unbound(kDomU, 0, remote), 0);
  expect_unbound(test, "... status in domain 1: unbound for domain 0", kDomU, remote, 0);
  sleep_ms(50);  // the companion finds the port while it is unbound, or once bound
  test.check("bind_interdomain to it", bind_interdomain(kDomU, remote, local), 0);
  events_mask(local);
  clear_pending(local);
  expect_interdomain(test, "... domain 1's end: interdomain to ours", kDomU, remote, 0, local);
  expect_interdomain(test, "... our end: interdomain to domain 1's", DOMID_SELF, local, kDomU, remote);
  test.check("send to domain 1", send(local), 0);
  test.check("... domain 1 answers on the channel (its companion saw the event)", wait_pending(local, 3000), true);
  clear_pending(local);
  // Only now: the companion answers after it found no map (peer_refused), and reads this one
  // back once our end is closed.
  const E820Entry map[1] = {{0, uint64_t(current_pages(kDomU)) * 4096, 1}};
  test.check("set_memory_map of domain 1 (its companion reads it back)", set_map(kDomU, map, 1), 0);
  test.check("close our end", close(local), 0);
  expect_unbound(test, "... domain 1's end is unbound, waiting for us again", kDomU, remote, 0);
  for (unsigned waited = 0; waited < 3000 && ports_in_use(kDomU) != domu_ports; waited += 10) sleep_ms(10);
  test.check("... the companion closed its end: domain 1's ports as before", ports_in_use(kDomU), domu_ports);
  test.check("... ours as before", ports_in_use(DOMID_SELF), our_ports);
  (void)dom_exc;
}

bool domu_shut_down() {
  xen_domctl_getdomaininfo info{};
  return control::get_info(kDomU, info) == 0 && (info.flags & XEN_DOMINF_shutdown);
}

void shutdown_domu(SelfTest& test, evtchn_port_t dom_exc) {
  clear_pending(dom_exc);
  test.check("VIRQ_DOM_EXC not pending before", pending(dom_exc), false);
  test.check("SCHEDOP_remote_shutdown of domain 1 (poweroff)", remote_shutdown(kDomU, SHUTDOWN_poweroff), 0);
  test.check("... getdomaininfo: shut down", domu_shut_down(), true);
  test.check("... VIRQ_DOM_EXC pending on dom0's port", pending(dom_exc), true);
  clear_pending(dom_exc);
  test.check("close the VIRQ_DOM_EXC port", close(dom_exc), 0);
}

// ------------------------------------------------------------------------------------------
// In domain 1

volatile bool peer_event_seen;
void on_peer_event(uint32_t) { peer_event_seen = true; }

void peer_refused(SelfTest& test) {
  E820Entry none[1];
  unsigned count = 1;
  test.check("memory_map before dom0 set one: -ENOSYS", get_map(none, count), -XEN_ENOSYS);
  xen_pfn_t list[1] = {0};
  evtchn_port_t port = 0;
  evtchn_status_t s;
  test.check("populate_physmap for dom0: 0 extents (XSM_TARGET)", populate(0, list, 1), 0);
  test.check("increase_reservation for dom0: 0", reservation(XENMEM_increase_reservation, 0, list, 1), 0);
  list[0] = 1;
  test.check("decrease_reservation for dom0: 0", decrease(0, list, 1), 0);
  test.check("populate for no domain: 0", populate(kAbsent, list, 1), 0);
  test.check("current_reservation of dom0: -EPERM", current_pages(0), -XEN_EPERM);
  test.check("maximum_reservation of dom0: -EPERM", query(XENMEM_maximum_reservation, 0), -XEN_EPERM);
  test.check("current_reservation of no domain: -ESRCH", current_pages(kAbsent), -XEN_ESRCH);
  const E820Entry map[1] = {{0, 4096, 1}};
  test.check("set_memory_map of dom0: -EPERM", set_map(0, map, 1), -XEN_EPERM);
  test.check("alloc_unbound in dom0: -EPERM", alloc_unbound(0, kDomU, port), -XEN_EPERM);
  test.check("alloc_unbound in no domain: -ESRCH", alloc_unbound(kAbsent, 0, port), -XEN_ESRCH);
  test.check("status of dom0's port 1: -EPERM", status(0, 1, s), -XEN_EPERM);
  test.check("bind_interdomain to dom0's port 1 (not unbound for us): -EINVAL", bind_interdomain(0, 1, port),
             -XEN_EINVAL);
  test.check("SCHEDOP_remote_shutdown of dom0: -EPERM", remote_shutdown(0, SHUTDOWN_poweroff), -XEN_EPERM);
  pv::PageTableSlot slot = scratch_slot();
  uint64_t entry = read_entry(slot).raw();
  test.check("mmu_update in dom0's tables (pt_dom 1): -EPERM",
             mmu_update_as(slot.machine_address, entry, (1u << 16) | DOMID_SELF), -XEN_EPERM);
  test.check("mmuext_op on dom0's behalf: -EPERM", mmuext_as(MMUEXT_PIN_L1_TABLE, 0, 0), -XEN_EPERM);
  test.check("MMU_MACHPHYS_UPDATE naming dom0 as page owner: -EPERM",
             mmu_update_as((1ull << 12) | MMU_MACHPHYS_UPDATE, 0, 0), -XEN_EPERM);
}

// Finds the port dom0 allocates in this domain for itself (not the console's).
evtchn_port_t wait_for_dom0_port(unsigned ms) {
  for (unsigned waited = 0; waited < ms; waited += 10) {
    for (evtchn_port_t port = 1; port < 64; ++port) {
      evtchn_status_t s;
      if (port == console_port() || status(DOMID_SELF, port, s) != 0) continue;
      if ((s.status == EVTCHNSTAT_unbound && s.u.unbound.dom == 0) ||
          (s.status == EVTCHNSTAT_interdomain && s.u.interdomain.dom == 0))
        return port;
    }
    sleep_ms(10);
  }
  return 0;
}

void peer_events(SelfTest& test) {
  evtchn_port_t port = wait_for_dom0_port(10000);
  test.check("dom0 allocated a port here", port != 0, true);
  if (!port) return;
  test.check("attach a handler", events_attach(port, on_peer_event), true);
  for (unsigned waited = 0; waited < 5000 && !peer_event_seen; waited += 5) sleep_ms(5);
  test.check("dom0's event arrived (upcall, handler)", bool(peer_event_seen), true);
  evtchn_status_t bound{};
  test.check(
      "... status: interdomain to dom0",
      status(DOMID_SELF, port, bound) == 0 && bound.status == EVTCHNSTAT_interdomain && bound.u.interdomain.dom == 0,
      true);
  test.check("answer dom0", send(port), 0);
  evtchn_status_t s{};
  for (unsigned waited = 0; waited < 5000; waited += 10) {
    if (status(DOMID_SELF, port, s) == 0 && s.status == EVTCHNSTAT_unbound) break;
    sleep_ms(10);
  }
  test.check("dom0 closed its end: ours is unbound for dom0", s.status == EVTCHNSTAT_unbound && s.u.unbound.dom == 0,
             true);
  test.check("send on it now: dropped, 0", send(port), 0);
  events_detach(port);
  test.check("close it", close(port), 0);
  E820Entry map[4] = {};
  unsigned count = 4;
  test.check("memory_map: the map dom0 set for us", get_map(map, count), 0);
  test.check("... one RAM entry of our size",
             count == 1 && map[0].address == 0 && map[0].size == boot_info.nr_pages * 4096 && map[0].type == 1, true);
}

// Garbage in the ring's indexes: the hypervisor skips it and the console goes on.
void peer_console(SelfTest& test) {
  xencons_interface* ring = console_ring();
  test.check("the console is the ring of start_info->console.domU", ring != nullptr, true);
  if (!ring) return;
  volatile xencons_interface* shared = ring;
  evtchn_port_t port = evtchn_port_t(console_port());
  XENCONS_RING_IDX producer = shared->out_prod;
  shared->out_prod = producer + 0x10000000u;  // far ahead of the consumer
  long far_ahead = send(port);
  shared->out_prod = shared->out_cons - 1;  // behind it
  long behind = send(port);
  shared->out_cons = 12345;  // the backend's index, scribbled over
  long scribbled = send(port);
  test.check("notify with the producer far ahead, behind, the consumer scribbled: 0 each",
             far_ahead == 0 && behind == 0 && scribbled == 0, true);
  test.note("the hypervisor skipped the garbage; this line came through the ring after it", 0);
}
}  // namespace

void selftest_xdom_self(SelfTest& test) {
  memory_self_frames(test);
  memory_self_scrub(test);
  memory_self_hostile(test);
  memory_self_map(test);
  events_self(test);
  event_buckets_self(test);
  foreign_self(test);
}

void selftest_xdom_domu(SelfTest& test) {
  evtchn_bind_virq_t exc{};
  exc.virq = VIRQ_DOM_EXC;
  test.check("bind VIRQ_DOM_EXC", xen::event_channel_op(EVTCHNOP_bind_virq, &exc), 0);
  events_mask(exc.port);
  memory_domu(test);
  foreign_tables(test);
  events_domu(test, exc.port);
  shutdown_domu(test, exc.port);
}

void selftest_xdom_peer(SelfTest& test) {
  peer_refused(test);
  peer_events(test);
  peer_console(test);
}

// Waits for dom0's SCHEDOP_remote_shutdown (dom0's selftest=xdom-domu ends with it).
void selftest_xdom_wait(SelfTest& test) {
  test.note("waiting for dom0 to shut this domain down", 0);
  for (;;) sleep_ms(1000);
}

}  // namespace kernel
