// selftest=tbuf: the trace buffers as dom0's tools see them (XEN_SYSCTL_tbuf_op, the t_info
// page and the per-CPU rings, VIRQ_TBUF, lost records). Run on ours and on Xen 4.17: the
// expected values are Xen's, and the records are read with the same freestanding ring code
// the capture and the host tools use.
#define __XEN_TOOLS__ 1  // sysctl.h is the tools' interface (guest handles need it)
#include <stddef.h>
#include <stdint.h>
#include <xen/xen.h>
#include <xen/sysctl.h>
#include <xen/trace.h>

#include "arch/hypercall.h"
#include "arch/xen.h"
#include "common/placement_new.h"
#include "kernel/memory/direct_map.h"
#include "kernel/memory/physical_memory.h"
#include "selftest/control/control_selftests.h"
#include "pv-kernel-patches/shared_info.h"
#include "kernel/measurement/trace_capture.h"
#include "trace/format/events.h"
#include "trace/format/ring.h"

namespace kernel {
namespace {

constexpr uint32_t kPages = 4;
// Where the shared pages are mapped: kernel space no one else uses (trace=capture uses
// 0xffffffffb0000000; the two are not run together).
constexpr uint64_t kWindow = 0xffffffffb1000000ull;
constexpr uint64_t kReadOnly = PageTableEntry::kPresent | PageTableEntry::kAccessed;
constexpr uint64_t kShared =
    PageTableEntry::kPresent | PageTableEntry::kWritable | PageTableEntry::kAccessed | PageTableEntry::kDirty;

pv::PageTableSlot window_slot(unsigned page) {
  uint64_t va = kWindow + page * 4096ull;
  return table_slot(kernel_l1_for(va), lib::table_index(va, Level::l1), Level::l1);
}

constexpr unsigned kBitsPerWord = sizeof(xen_ulong_t) * 8;

bool port_pending(uint32_t port) {
  return (shared_info()->evtchn_pending[port / kBitsPerWord] >> (port % kBitsPerWord)) & 1;
}

// Masked, the port only collects its pending bit: the kernel's upcall (a timer tick) would
// otherwise acknowledge it before the test looks.
void mask_port(uint32_t port) {
  __atomic_fetch_or(&shared_info()->evtchn_mask[port / kBitsPerWord], xen_ulong_t{1} << (port % kBitsPerWord),
                    __ATOMIC_SEQ_CST);
}

// Generates trace records: every hypercall makes at least one (TRC_PV_HYPERCALL_V2).
void hypercalls(unsigned count) {
  for (unsigned i = 0; i < count; ++i) xen::xen_version(XENVER_version, nullptr);
}

void check_control_before_allocation(SelfTest& test) {
  xen_sysctl_tbuf_op info{};
  test.check("get_info before set_size", trace_capture::tbuf_op(XEN_SYSCTL_TBUFOP_get_info, 0, &info), 0);
  test.check("no t_info frame yet", long(info.buffer_mfn), 0);
  test.check("no t_info size yet", long(info.size), 0);
  test.check("enable before set_size returns -EINVAL", trace_capture::tbuf_op(XEN_SYSCTL_TBUFOP_enable, 0),
             -XEN_EINVAL);
  test.check("set_size 0 returns -EINVAL", trace_capture::tbuf_op(XEN_SYSCTL_TBUFOP_set_size, 0), -XEN_EINVAL);
}

// The same shared page through update_va_mapping_otherdomain, at a spare page of the window.
void check_va_mapping_otherdomain(SelfTest& test, PageTableEntry t_info_entry) {
  const uint64_t va = kWindow + (kPages + 1) * 4096ull;
  window_slot(kPages + 1);  // its L1 exists
  auto map_as = [&](uint64_t value, uint64_t domid) {
    return arch::hypercall(__HYPERVISOR_update_va_mapping_otherdomain, va, value, UVMF_INVLPG | UVMF_LOCAL, domid);
  };
  test.check("update_va_mapping_otherdomain naming itself returns -ESRCH", map_as(t_info_entry.raw(), 0), -XEN_ESRCH);
  test.check("update_va_mapping_otherdomain naming no domain returns -ESRCH", map_as(t_info_entry.raw(), 100),
             -XEN_ESRCH);
  test.check("update_va_mapping_otherdomain maps t_info with DOMID_XEN", map_as(t_info_entry.raw(), DOMID_XEN), 0);
  test.check("... and reads the same t_info", reinterpret_cast<const t_info*>(va)->tbuf_size, kPages);
  test.check("... and unmaps it", map_as(0, DOMID_SELF), 0);
}

// Maps t_info and the buffer of CPU 0; returns the ring over it (nullptr on failure).
::trace::TraceRing* map_ring(SelfTest& test, uint64_t t_info_mfn) {
  // t_info is shared read-only (the rings are shared writable: the consumer moves cons).
  const PageTableEntry t_info_entry = PageTableEntry::make(Mfn{t_info_mfn}, kReadOnly);
  const PageTableEntry t_info_writable = PageTableEntry::make(Mfn{t_info_mfn}, kShared);
  test.check("t_info as the caller's own frame returns -EBUSY",
             pv::ops.map_foreign(window_slot(0), t_info_entry, DOMID_SELF), -XEN_EBUSY);
  test.check("t_info writable returns -EBUSY", pv::ops.map_foreign(window_slot(0), t_info_writable, DOMID_XEN),
             -XEN_EBUSY);
  long rc = pv::ops.map_foreign(window_slot(0), t_info_entry, DOMID_XEN);
  test.check("t_info mapped read-only with foreigndom DOMID_XEN", rc, 0);
  if (rc != 0) return nullptr;
  auto* t_info_page = reinterpret_cast<const t_info*>(kWindow);
  test.check("t_info says the size set", t_info_page->tbuf_size, kPages);
  check_va_mapping_otherdomain(test, t_info_entry);
  const uint32_t* mfns = reinterpret_cast<const uint32_t*>(t_info_page) + t_info_page->mfn_offset[0];
  for (uint32_t page = 0; page < kPages; ++page) {
    if (pv::ops.map_foreign(window_slot(page + 1), PageTableEntry::make(Mfn{mfns[page]}, kShared), DOMID_XEN) != 0) {
      test.check("buffer page mapped with foreigndom DOMID_XEN", -1, 0);
      return nullptr;
    }
  }
  alignas(::trace::TraceRing) static uint8_t storage[sizeof(::trace::TraceRing)];
  auto* header = reinterpret_cast<t_buf*>(kWindow + 4096);
  auto* ring = new (storage)::trace::TraceRing(header, header + 1, kPages * 4096u - sizeof(t_buf));
  test.check("the ring's indices are sane", ring->valid(), true);
  // As Xen's alloc_trace_bufs: set_size starts recording (the hypercalls since made records).
  test.check("recording started with set_size", ring->unconsumed_bytes() > 0, true);
  return ring;
}

// VIRQ_TBUF is raised once the records pass half the buffer, not before.
void check_high_water(SelfTest& test, ::trace::TraceRing& ring, uint32_t port) {
  unsigned calls = 0;
  while (!port_pending(port) && calls < 4000) {
    hypercalls(1);
    ++calls;
  }
  test.check("VIRQ_TBUF raised while records accumulate", port_pending(port), true);
  test.check("... once half the buffer is used", ring.unconsumed_bytes() >= ring.size() / 2, true);
  test.note("hypercalls until VIRQ_TBUF", calls);
}

// A full buffer loses records and says how many in a TRC_LOST_RECORDS record once there is
// room again; nothing else is overwritten.
void check_lost_records(SelfTest& test, ::trace::TraceRing& ring) {
  hypercalls(4 * ring.size() / 16);  // records are at least 16 bytes: several times too many
  test.check("a full buffer stays within its size", ring.unconsumed_bytes() <= ring.size(), true);
  ::trace::RecordFields record;
  unsigned drained = 0;
  while (ring.pop(record)) ++drained;
  test.check("the full buffer's records are all readable", drained > 0 && !ring.corrupt(), true);
  hypercalls(1);
  bool found = ring.pop(record);
  test.check("the next record says records were lost", found && record.event == TRC_LOST_RECORDS, true);
  test.check("... with a count", found && record.extra_count >= 1 && record.extra[0] > 0, true);
  test.note("records lost", found ? record.extra[0] : 0);
  while (ring.pop(record)) {
  }
}

// Hypercalls under `mask`: true if any TRC_PV_HYPERCALL_V2 record was written.
bool hypercalls_recorded_under(::trace::TraceRing& ring, uint32_t mask) {
  ::trace::RecordFields record;
  trace_capture::tbuf_op(XEN_SYSCTL_TBUFOP_set_evt_mask, 0, nullptr, mask);
  while (ring.pop(record)) {
  }
  hypercalls(20);
  bool seen = false;
  while (ring.pop(record)) seen = seen || record.event == TRC_PV_HYPERCALL_V2;
  return seen;
}

// Xen's three mask tests: a common bit, a common class, a common subclass.
void check_event_mask(SelfTest& test, ::trace::TraceRing& ring) {
  test.check("hypercalls are recorded under TRC_PV", hypercalls_recorded_under(ring, TRC_PV), true);
  test.check("... not under TRC_SCHED (another class)", hypercalls_recorded_under(ring, TRC_SCHED), false);
  test.check("... not under TRC_PV_SUBCALL (another subclass)", hypercalls_recorded_under(ring, TRC_PV_SUBCALL), false);
  test.check("... and again under TRC_ALL", hypercalls_recorded_under(ring, TRC_ALL), true);
}

// XEN_SYSCTL_TBUFOP_set_cpu_mask with an 8-bit map (bit n = CPU n).
long set_cpu_mask(uint8_t bits) {
  static uint8_t bitmap[1];
  bitmap[0] = bits;
  xen_sysctl_t request{};
  request.cmd = XEN_SYSCTL_tbuf_op;
  request.interface_version = XEN_SYSCTL_INTERFACE_VERSION;
  request.u.tbuf_op.cmd = XEN_SYSCTL_TBUFOP_set_cpu_mask;
  set_xen_guest_handle(request.u.tbuf_op.cpu_mask.bitmap, bitmap);
  request.u.tbuf_op.cpu_mask.nr_bits = 8;
  return arch::hypercall(__HYPERVISOR_sysctl, arch::arg(&request));
}

// As Xen's tb_cpu_mask: a CPU outside the mask records nothing (this vCPU runs on CPU 0, whose
// ring this is), and records again once it is back in it.
void check_cpu_mask(SelfTest& test, ::trace::TraceRing& ring) {
  test.check("set_cpu_mask without CPU 0", set_cpu_mask(0xfe), 0);
  ::trace::RecordFields record;  // the set_cpu_mask call's own record was made before it
  while (ring.pop(record)) {
  }
  hypercalls(10);
  test.check("... CPU 0 records nothing", long(ring.unconsumed_bytes()), 0);
  test.check("set_cpu_mask of every CPU", set_cpu_mask(0xff), 0);
  hypercalls(10);
  test.check("... CPU 0 records again", ring.unconsumed_bytes() > 0, true);
}

void check_disable(SelfTest& test, ::trace::TraceRing& ring) {
  test.check("disable", trace_capture::tbuf_op(XEN_SYSCTL_TBUFOP_disable, 0), 0);
  ::trace::RecordFields record;
  while (ring.pop(record)) {
  }
  hypercalls(10);
  test.check("no records while disabled", long(ring.unconsumed_bytes()), 0);
}

void unmap_window() {
  for (unsigned page = 0; page <= kPages + 1; ++page) pv::ops.raw_mmu_update(window_slot(page).machine_address, 0);
  pv::ops.flush_tlb();
}

}  // namespace

void selftest_tbuf(SelfTest& test) {
  check_control_before_allocation(test);
  test.check("set_size", trace_capture::tbuf_op(XEN_SYSCTL_TBUFOP_set_size, kPages), 0);
  test.check("the same size again returns -EBUSY", trace_capture::tbuf_op(XEN_SYSCTL_TBUFOP_set_size, kPages),
             -XEN_EBUSY);
  test.check("another size returns -EINVAL", trace_capture::tbuf_op(XEN_SYSCTL_TBUFOP_set_size, 2 * kPages),
             -XEN_EINVAL);
  xen_sysctl_tbuf_op info{};
  test.check("get_info", trace_capture::tbuf_op(XEN_SYSCTL_TBUFOP_get_info, 0, &info), 0);
  test.check("t_info is one page", long(info.size), 4096);
  ::trace::TraceRing* ring = info.buffer_mfn ? map_ring(test, info.buffer_mfn) : nullptr;
  if (!ring) return;
  evtchn_bind_virq_t bind{};
  bind.virq = VIRQ_TBUF;
  test.check("bind VIRQ_TBUF", xen::event_channel_op(EVTCHNOP_bind_virq, &bind), 0);
  mask_port(bind.port);
  test.check("enable", trace_capture::tbuf_op(XEN_SYSCTL_TBUFOP_enable, 0), 0);
  check_high_water(test, *ring, bind.port);
  check_lost_records(test, *ring);
  check_event_mask(test, *ring);
  check_cpu_mask(test, *ring);
  check_disable(test, *ring);
  evtchn_close_t close{};
  close.port = bind.port;
  test.check("close VIRQ_TBUF", xen::event_channel_op(EVTCHNOP_close, &close), 0);
  unmap_window();
}

}  // namespace kernel
