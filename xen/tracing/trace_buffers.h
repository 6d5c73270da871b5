// The hypervisor's trace buffers, laid out as Xen's public trace.h defines them: a t_info
// page (buffer size and each CPU's list of buffer frames) and per CPU a t_buf header followed
// by the record ring. dom0 controls them with XEN_SYSCTL_tbuf_op and maps the pages (they are
// shared with privileged domains) to read records out, exactly as it would on Xen.
//
// Recording costs one predictable branch while tracing is off.
#pragma once
#include <stdint.h>

namespace trace_buffers {
extern bool recording;  // enabled and allocated

struct Info {
  uint64_t t_info_mfn = 0;
  uint32_t t_info_bytes = 0;
  uint32_t event_mask = 0;
};

// Control, for XEN_SYSCTL_tbuf_op. Return 0 or a negative Xen errno.
long set_size(uint32_t pages_per_cpu);  // only before the buffers exist
long enable();                          // allocates on first use
long disable();
void set_event_mask(uint32_t mask);
void set_cpu_mask(uint64_t mask);
Info info();

// Records an event with TSC and up to 7 extra words (call through trace::event below). A
// record that does not fit is counted by the ring and reported in a TRC_LOST_RECORDS record.
void record(uint32_t event, const uint32_t* extra, unsigned count);
}  // namespace trace_buffers

namespace trace {
// Built with PVHV_TRACE_POINTS=0 (cmake -DPVHV_TRACE_POINTS=OFF) every trace point compiles
// to nothing: that build is the baseline for what tracing-off costs.
template <typename... Words>
inline void event(uint32_t id, Words... words) {
#if defined(PVHV_TRACE_POINTS) && PVHV_TRACE_POINTS == 0
  return;
#endif
  if (!trace_buffers::recording) [[likely]] return;
  const uint32_t extra[sizeof...(Words) + 1] = {uint32_t(words)..., 0};
  trace_buffers::record(id, extra, sizeof...(Words));
}
// A 64-bit value as two extra words, low first (Xen's layout for 64-bit fields).
inline uint32_t low(uint64_t v) { return uint32_t(v); }
inline uint32_t high(uint64_t v) { return uint32_t(v >> 32); }
}  // namespace trace
