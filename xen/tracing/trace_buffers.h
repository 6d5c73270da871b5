// The hypervisor's trace buffers, laid out as Xen's public trace.h defines them: a t_info
// page (buffer size and each CPU's list of buffer frames) and per CPU a t_buf header followed
// by the record ring. dom0 controls them with XEN_SYSCTL_tbuf_op and maps the pages (they are
// shared with privileged domains) to read records out, exactly as it would on Xen.
//
// This is the recording side, which every floor from here up traces into: the ring, the event
// mask and the switch of the trace points. The buffers' control (allocating and sharing them,
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

// The ring records go to, once tracing/control allocated it: `header` then `data_bytes` of
// records, emptied here.
void attach(t_buf* header, uint32_t data_bytes);
// Recording on (every trace point patched into a jump to its recording code) or off.
void set_recording(bool on);
bool recording();
// Which event classes are recorded (XEN_SYSCTL_TBUFOP_set_evt_mask; all at first).
void set_event_mask(uint32_t mask);
uint32_t event_mask();

// Records an event with TSC and up to 7 extra words (call through trace::event below). A
// record that does not fit is counted by the ring and reported in a TRC_LOST_RECORDS record.
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
