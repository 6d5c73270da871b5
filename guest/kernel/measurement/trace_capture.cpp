#define __XEN_TOOLS__ 1  // sysctl.h is the tools' interface (guest handles need it)
#include <stddef.h>
#include <stdint.h>
#include <xen/xen.h>
#include <xen/sysctl.h>
#include <xen/trace.h>

#include "kernel/measurement/trace_capture.h"

#include "arch/hypercall.h"
#include "kernel/boot/boot_info.h"
#include "kernel/console/console.h"
#include "kernel/memory/direct_map.h"
#include "kernel/events/events.h"
#include "kernel/memory/physical_memory.h"
#include "kernel/measurement/pvhv.h"
#include "relay/link/serial_link.h"
#include "kernel/events/time.h"
#include "lib/cmdline.h"
#include "trace/format/encoder.h"
#include "trace/format/events.h"
#include "trace/format/ring.h"
#include "trace/format/t_info_layout.h"
#include "trace/format/time_ordered_drain.h"
#include "common/stream/stream_frame.h"
#include "common/placement_new.h"

namespace kernel::trace_capture {
bool capturing = false;

namespace {
namespace frame = ::trace::stream_frame;

constexpr uint32_t kBufferPages = 512;  // 2 MiB of records
// Where the shared pages are mapped: inside the kernel's 1 GiB, above any direct map.
constexpr uint64_t kWindow = 0xffffffffb0000000ull;
constexpr uint32_t kDrainAbove = kBufferPages * 4096 / 4;  // drain when a quarter is used
constexpr uint32_t kChunk = 16 * 1024;                     // one RECORDS frame at most
constexpr unsigned kUnknownHypercallInTable = 63;
constexpr unsigned kUnknownHypercallBeyondTable = 100;

// Per CPU with a buffer: its ring, mapped (t_info says which CPUs have one).
constexpr unsigned kMostCpus = 64;
struct CpuRing {
  alignas(::trace::TraceRing) uint8_t storage[sizeof(::trace::TraceRing)];
  ::trace::TraceRing* ring = nullptr;
};
CpuRing rings[kMostCpus];
::trace::TraceRing* ring_list[kMostCpus];  // rings[cpu].ring, for drain_in_time_order
unsigned cpus = 0;                         // physinfo's max_cpu_id + 1, as Xen's xentrace counts them
uint8_t chunk[kChunk];
// The VIRQ_TBUF handler may find a drain under way, and with several vCPUs another vCPU may be
// draining: one drain at a time (the rings have one consumer each; the link one sender).
bool draining = false;
uint64_t high_water_events = 0;

void send_frame(uint8_t type, const uint8_t* payload, uint32_t length) {
  serial_link::send_frame(type, 0, payload, length);
}

// The buffers are hypervisor pages shared with privileged domains: mapped by machine frame
// with DOMID_XEN as their owner, as xentrace maps them on Xen.
// t_info read-only (as Xen shares it), the rings writable (the consumer moves cons).
long map_shared(uint64_t va, uint64_t mfn, bool writable) {
  uint64_t flags = PageTableEntry::kPresent | PageTableEntry::kAccessed;
  if (writable) flags |= PageTableEntry::kWritable | PageTableEntry::kDirty;
  pv::PageTableSlot slot = table_slot(kernel_l1_for(va), lib::table_index(va, Level::l1), Level::l1);
  return pv::ops.map_foreign(slot, PageTableEntry::make(Mfn{mfn}, flags), DOMID_XEN);
}

// physinfo's max_cpu_id + 1 (xentrace's get_num_cpus), or 0.
unsigned physinfo_cpus() {
  xen_sysctl_t request{};
  request.cmd = XEN_SYSCTL_physinfo;
  request.interface_version = XEN_SYSCTL_INTERFACE_VERSION;
  if (arch::hypercall(__HYPERVISOR_sysctl, arch::arg(&request)) != 0) return 0;
  return request.u.physinfo.max_cpu_id + 1;
}

// t_info (get_info's `bytes` from its frame on), then each CPU's buffer after it, as xentrace
// maps them: every CPU that t_info gives a list of frames (trace/format/t_info_layout.h).
bool map_buffers(uint64_t t_info_mfn, uint32_t bytes) {
  namespace layout = ::trace::t_info_layout;
  const uint32_t info_pages = bytes ? (bytes + 4095) / 4096 : 1;
  for (uint32_t page = 0; page < info_pages; ++page)
    if (map_shared(kWindow + page * 4096ull, t_info_mfn + page, false) < 0) return false;
  const layout::Reader info{reinterpret_cast<const uint8_t*>(kWindow), size_t(info_pages) * 4096};
  const uint32_t pages = info.pages();
  cpus = physinfo_cpus();
  if (cpus == 0) cpus = 1;
  if (cpus > kMostCpus) cpus = kMostCpus;
  uint64_t va = kWindow + info_pages * 4096ull;
  unsigned mapped = 0;
  for (unsigned cpu = 0; cpu < cpus; ++cpu) {
    const uint8_t* list = info.list(cpu);
    if (!list) continue;
    for (uint32_t page = 0; page < pages; ++page)
      if (map_shared(va + page * 4096ull, layout::Reader::frame(list, page), true) < 0) return false;
    auto* header = reinterpret_cast<t_buf*>(va);
    rings[cpu].ring = new (rings[cpu].storage)::trace::TraceRing(header, header + 1, pages * 4096u - sizeof(t_buf));
    if (!rings[cpu].ring->valid()) return false;
    ring_list[cpu] = rings[cpu].ring;
    va += pages * 4096ull;
    ++mapped;
  }
  return mapped != 0;
}

// The most records waiting in one CPU's buffer: what the drain thresholds look at.
uint32_t most_unconsumed() {
  uint32_t most = 0;
  for (unsigned cpu = 0; cpu < cpus; ++cpu)
    if (rings[cpu].ring && rings[cpu].ring->unconsumed_bytes() > most) most = rings[cpu].ring->unconsumed_bytes();
  return most;
}

void send_hello() {
  uint8_t payload[20] = {};
  frame::put_le(payload, 1, 4);         // protocol version
  frame::put_le(payload + 4, cpus, 4);  // CPUs
  // TSC frequency 0: the hypervisor's first record says it (TSC_FREQUENCY).
  send_frame(frame::hello, payload, sizeof(payload));
}

// The hypervisor's counts when tracing starts and stops: every emulated write in between has a
// TRC_PV_PTWR_EMULATION record, and every page fault a record saying how it ended (the
// capture tests check both).
void report_counters(const char* when) {
  pvhv_counters counters;
  if (read_pvhv_counters(counters) == 0)
    print("trace: %s at emulations=%lu unhooks=%lu rehooks=%lu virq_tbuf=%lu page_faults=%lu\n", when,
          counters.emulations, counters.unhooks, counters.rehooks, high_water_events, counters.page_faults);
}

// One of our records, sent after everything drained so far, so the stream stays in order.
void send_record(const ::trace::RecordFields& record) {
  uint32_t words[16];
  size_t count = ::trace::encode_record(record, words);
  send_frame(frame::records, reinterpret_cast<const uint8_t*>(words), uint32_t(count * 4));
}

// Copies everything recorded so far to COM2: each RECORDS frame holds one CPU's records with
// the CPU as its channel (xentrace writes a TRC_TRACE_CPU_CHANGE for it), the CPUs' windows in
// time order (trace/format/time_ordered_drain.h says why). Returns the bytes copied.
uint32_t drain() {
  if (__atomic_exchange_n(&draining, true, __ATOMIC_ACQUIRE)) return 0;
  const uint32_t total = ::trace::drain_in_time_order(
      ring_list, cpus, chunk, sizeof(chunk), [](unsigned cpu, const uint8_t* bytes, uint32_t size) {
        serial_link::send_frame(frame::records, uint16_t(cpu), bytes, size);
      });
  __atomic_store_n(&draining, false, __ATOMIC_RELEASE);
  return total;
}

// A drain in the middle of an operation (one CPU runs the workload and the capture): the
// CAPTURE_DRAIN record says how long it took, so the analyser takes it out of the
// operation's cost. Drains at operation boundaries (mark) fall outside both markers.
void drain_and_record() {
  uint64_t start = read_tsc();
  uint32_t bytes = drain();
  if (bytes == 0) return;
  const uint32_t extra[3] = {uint32_t(start), uint32_t(start >> 32), bytes};
  send_record(::trace::make_record(::trace::events::kCaptureDrain, read_tsc(), extra, 3));
}

// VIRQ_TBUF: the hypervisor says the buffer is half full (it is how Xen wakes xentrace). The
// kernel also drains at every exit from the kernel and inside long loops (poll), so this
// matters while dom0 sits blocked.
void on_high_water(uint32_t) {
  ++high_water_events;
  if (capturing) drain_and_record();
}
}  // namespace

void start_if_requested() {
  char value[16];
  if (!lib::cmdline_value(boot_info.cmdline, "trace", value, sizeof(value))) return;
  long rc = serial_link::open();
  if (rc < 0) {
    print("trace: no I/O permission (%ld): capture off\n", rc);
    return;
  }
  xen_sysctl_tbuf_op info{};
  if ((rc = tbuf_op(XEN_SYSCTL_TBUFOP_set_size, kBufferPages)) < 0 || (rc = tbuf_op(XEN_SYSCTL_TBUFOP_enable, 0)) < 0 ||
      (rc = tbuf_op(XEN_SYSCTL_TBUFOP_get_info, 0, &info)) < 0 || !map_buffers(info.buffer_mfn, info.size)) {
    print("trace: cannot set up the trace buffers (%ld): capture off\n", rc);
    return;
  }
  send_hello();
  events_bind_virq(VIRQ_TBUF, on_high_water);
  capturing = true;
  // Two calls the hypervisor refuses (-ENOSYS), one with an empty slot of its table and one
  // beyond it: as on Xen, both are recorded, which the trace tests check.
  arch::hypercall(kUnknownHypercallInTable);
  arch::hypercall(kUnknownHypercallBeyondTable);
  report_counters("started");
  print("trace: capturing %u pages of trace buffer to COM2\n", kBufferPages);
}

long tbuf_op(uint32_t command, uint32_t size, xen_sysctl_tbuf_op* out, uint32_t evt_mask) {
  xen_sysctl_t request{};
  request.cmd = XEN_SYSCTL_tbuf_op;
  request.interface_version = XEN_SYSCTL_INTERFACE_VERSION;
  request.u.tbuf_op.cmd = command;
  request.u.tbuf_op.size = size;
  request.u.tbuf_op.evt_mask = evt_mask;
  long rc = arch::hypercall(__HYPERVISOR_sysctl, arch::arg(&request));
  if (out) *out = request.u.tbuf_op;
  return rc;
}

void drain_when_idle() {
  // Rate-limited, and only past a threshold: on Xen each trapped port access of a drain is
  // itself a trace record (TRC_PV_EMULATE_PRIVOP), so draining every idle moment would never end.
  constexpr uint32_t kIdleDrainAbove = 16 * 1024;
  constexpr uint64_t kIdleDrainEveryNs = 100'000'000;
  static uint64_t last_ns = 0;
  if (!capturing || most_unconsumed() < kIdleDrainAbove) return;
  uint64_t now = system_time_ns();
  if (now - last_ns < kIdleDrainEveryNs) return;
  last_ns = now;
  drain();
}

void drain_if_filling() {
  if (capturing && most_unconsumed() > kDrainAbove) drain_and_record();
}

void mark(Operation operation, uint32_t id, bool begin) {
  if (!capturing) return;
  // The marker is stamped when the operation really starts or ends, but sent after the
  // records before it, so the stream stays in order; the drain itself (port I/O) makes none.
  if (begin) drain();
  const uint32_t extra[2] = {uint32_t(operation), id};
  ::trace::RecordFields record = ::trace::make_record(
      begin ? ::trace::events::kOperationBegin : ::trace::events::kOperationEnd, read_tsc(), extra, 2);
  if (!begin) drain();
  send_record(record);
}

void restart_stream() {
  if (capturing) send_hello();
}

void finish() {
  if (!capturing) return;
  tbuf_op(XEN_SYSCTL_TBUFOP_disable, 0);
  report_counters("stopped");
  drain();
  uint8_t reason[4] = {};
  send_frame(frame::end, reason, sizeof(reason));
  capturing = false;
}
}  // namespace kernel::trace_capture
