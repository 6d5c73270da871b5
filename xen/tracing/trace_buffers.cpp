#include "tracing/trace_buffers.h"
#include "common/placement_new.h"
#include "arch/x86/cpu/registers.h"
#include "trace/format/event_mask.h"
#include "trace/format/ring.h"

namespace trace_buffers {
namespace {
bool recording_on = false;  // the trace points are jumps
uint32_t mask = TRC_ALL;
alignas(trace::TraceRing) uint8_t ring_storage[sizeof(trace::TraceRing)];
trace::TraceRing* ring = nullptr;
RunningSource running = nullptr;
ConsumerNotifier notify_consumer = nullptr;

// As Xen: the consumer is told once per crossing of half the buffer, with VIRQ_TBUF, a global
// VIRQ that goes to dom0 (Xen's xentrace sleeps on it). Sent after the record is complete, so
// anything the delivery records nests safely.
uint32_t high_water_bytes() { return ring->size() / 2; }
}  // namespace

void set_running_source(RunningSource source) { running = source; }
void set_consumer_notifier(ConsumerNotifier notify) { notify_consumer = notify; }

void attach(t_buf* header, uint32_t data_bytes) {
  ring = new (ring_storage) trace::TraceRing(header, header + 1, data_bytes);
  ring->reset();
}

void set_recording(bool on) {
  if (on == recording_on) return;
  recording_on = on;
  if constexpr (trace_points::compiled_in) trace_points::switch_all(on);
}

bool recording() { return recording_on; }
void set_event_mask(uint32_t event_mask) { mask = event_mask; }
uint32_t event_mask() { return mask; }

void record(uint32_t event, const uint32_t* extra, unsigned count) {
  if (!ring || !trace::event_mask_admits(mask, event)) return;
  trace::RecordFields fields;
  fields.event = event;
  fields.has_tsc = true;
  fields.tsc = cpu::rdtsc();
  fields.extra_count = count;
  for (unsigned i = 0; i < count && i < trace::kMaxExtraWords; ++i) fields.extra[i] = extra[i];
  const Running who = running();
  trace::TraceRing::Context context{who.domain, who.vcpu};
  bool below_high_water = ring->unconsumed_bytes() < high_water_bytes();
  ring->write(fields, context);
  if (below_high_water && ring->unconsumed_bytes() >= high_water_bytes()) notify_consumer();
}

}  // namespace trace_buffers
