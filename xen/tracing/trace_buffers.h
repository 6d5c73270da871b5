// The hypervisor's trace buffers, laid out as Xen's public trace.h defines them: a t_info
// page (buffer size and each CPU's list of buffer frames) and per CPU a t_buf header followed
// by the record ring. dom0 controls them with XEN_SYSCTL_tbuf_op and maps the pages (they are
// shared with privileged domains) to read records out, exactly as it would on Xen.
//
// This is the recording side, which every floor from here up traces into: one ring per physical
// CPU, each record written into the ring of the CPU it happens on, the event and CPU masks and
// the switch of the trace points. The buffers' control (allocating and sharing them,
// the CPU mask, what get_info reports) is tracing/control's, a floor above the machine memory it
// allocates from. While tracing is off a trace point costs one NOP (tracing/trace_points.h).
#pragma once
#include <stdint.h>
#include "abi/xen_abi.h"
#include <xen/trace.h>
#include "tracing/trace_points.h"

namespace trace_buffers {
// Who a record is of (the running domain and vCPU) and who reads the ring (dom0, woken with
// VIRQ_TBUF once per crossing of half the ring): the domains and the event channels know,
// floors above this one, and tell it at boot.
struct Running {
  uint16_t domain = 0;
  uint16_t vcpu = 0;
};
using RunningSource = Running (*)();
using ConsumerNotifier = void (*)();
void set_running_source(RunningSource source);
void set_consumer_notifier(ConsumerNotifier notify);

// CPU `cpu`'s ring, once tracing/control allocated it: `header` then `data_bytes` of records,
// emptied here. A CPU without a ring (offline when the buffers were allocated, as on Xen)
// records nothing.
//
// What protects a ring: only its own CPU writes it (record() picks the ring of the CPU it runs
// on, from the stack: arch/x86/cpu/per_cpu.h), with interrupts off for the record, so a trace
// point in an interrupt handler cannot interleave with the record it interrupted. The consumer
// (dom0's capture, pvhvd) on any CPU moves only `cons`; the producer publishes `prod` with a
// release store after the record's bytes, and reads `cons` with an acquire load before reusing
// the space it released (trace/format/ring.h), the order Xen's reader relies on (its rmb()
// between reading prod and the records, its mb() before writing cons).
void attach(unsigned cpu, t_buf* header, uint32_t data_bytes);
// Records that did not fit in CPU `cpu`'s ring and are not yet reported by a TRC_LOST_RECORDS
// record in it (0 without a ring).
uint32_t lost(unsigned cpu);
// Recording on (every trace point patched into a jump to its recording code) or off.
void set_recording(bool on);
bool recording();
// Which event classes are recorded (XEN_SYSCTL_TBUFOP_set_evt_mask; all at first).
void set_event_mask(uint32_t mask);
uint32_t event_mask();
// On which CPUs records are made (XEN_SYSCTL_TBUFOP_set_cpu_mask, bit n = CPU n; all at
// first): as Xen's tb_cpu_mask, a CPU outside it drops its records without counting them lost.
void set_cpu_mask(uint64_t mask);
uint64_t cpu_mask();

// While a CPU runs a cross-CPU call's function (arch/x86/platform/cross_cpu wraps it in one of
// these), it may hold no lock the consumer's wake-up needs and its caller may hold them all: a
// record there that crosses half the ring leaves VIRQ_TBUF pending, and the next record made
// outside such a call, on any CPU, sends it (Xen defers the same wake-up to a softirq).
struct QuietNotifications {
  QuietNotifications();
  ~QuietNotifications();
  QuietNotifications(const QuietNotifications&) = delete;
  QuietNotifications& operator=(const QuietNotifications&) = delete;
};

// Records an event with TSC and up to 7 extra words (call through trace::event below) into
// this CPU's ring. A record that does not fit is counted by that ring and reported in a
// TRC_LOST_RECORDS record in it once space frees up.
void record(uint32_t event, const uint32_t* extra, unsigned count);
}  // namespace trace_buffers

namespace trace {
// The record's words are built only on the out-of-line path, so a trace point adds nothing to
// the frame or the register pressure of the code around it.
template <typename... Words>
[[gnu::noinline, gnu::cold]] void record_words(uint32_t id, Words... words) {
  const uint32_t extra[sizeof...(Words) + 1] = {words..., 0};
  trace_buffers::record(id, extra, sizeof...(Words));
}

// Built with PVHV_TRACE_POINTS=0 (the build/xen/xen-untraced image) every trace point compiles
// to nothing: that image is the baseline `make bench` measures tracing-off cost against.
template <typename... Words>
[[gnu::always_inline]] inline void event(uint32_t id, Words... words) {
  if (trace_points::on()) [[unlikely]]
    record_words(id, uint32_t(words)...);
}
// A 64-bit value as two extra words, low first (Xen's layout for 64-bit fields).
inline uint32_t low(uint64_t v) { return uint32_t(v); }
inline uint32_t high(uint64_t v) { return uint32_t(v >> 32); }
}  // namespace trace
