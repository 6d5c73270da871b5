#include "tracing/trace_buffers.h"
#include "common/placement_new.h"
#include "arch/x86/cpu/per_cpu.h"
#include "arch/x86/cpu/registers.h"
#include "arch/x86/layout.h"
#include "trace/format/event_mask.h"
#include "trace/format/ring.h"

namespace trace_buffers {
namespace {
bool recording_on = false;  // the trace points are jumps
uint32_t mask = TRC_ALL;
uint64_t cpus = ~0ULL;  // XEN_SYSCTL_TBUFOP_set_cpu_mask

// Per CPU: its ring (null until tracing/control attaches one). Each on cache lines of its own:
// the CPUs write their rings' bookkeeping (reserved_at_, lost_) at once. A ring is written only
// by its CPU (see attach in the header); `ring` itself is set once, before recording starts.
struct alignas(64) PerCpu {
  alignas(trace::TraceRing) uint8_t storage[sizeof(trace::TraceRing)];
  trace::TraceRing* ring;
};
PerCpu per_cpu_rings[MAX_CPUS];
// Per CPU: inside a cross-CPU call's function (QuietNotifications), written by that CPU only.
uint8_t quiet[MAX_CPUS];
bool notify_deferred = false;  // a crossing of half a ring while quiet: VIRQ_TBUF still owed
RunningSource running = nullptr;
ConsumerNotifier notify_consumer = nullptr;

trace::TraceRing* ring_of(unsigned cpu) {
  return cpu < MAX_CPUS ? __atomic_load_n(&per_cpu_rings[cpu].ring, __ATOMIC_ACQUIRE) : nullptr;
}
}  // namespace

QuietNotifications::QuietNotifications() {
  const unsigned cpu = per_cpu::this_cpu();
  if (cpu < MAX_CPUS) ++quiet[cpu];
}
QuietNotifications::~QuietNotifications() {
  const unsigned cpu = per_cpu::this_cpu();
  if (cpu < MAX_CPUS) --quiet[cpu];
}

void set_running_source(RunningSource source) { running = source; }
void set_consumer_notifier(ConsumerNotifier notify) { notify_consumer = notify; }

void attach(unsigned cpu, t_buf* header, uint32_t data_bytes) {
  if (cpu >= MAX_CPUS) return;
  auto* ring = new (per_cpu_rings[cpu].storage) trace::TraceRing(header, header + 1, data_bytes);
  ring->reset();
  __atomic_store_n(&per_cpu_rings[cpu].ring, ring, __ATOMIC_RELEASE);
}

uint32_t lost(unsigned cpu) {
  trace::TraceRing* ring = ring_of(cpu);
  return ring ? ring->lost() : 0;
}

void set_recording(bool on) {
  if (on == recording_on) return;
  recording_on = on;
  if constexpr (trace_points::compiled_in) trace_points::switch_all(on);
}

bool recording() { return recording_on; }
void set_event_mask(uint32_t event_mask) { __atomic_store_n(&mask, event_mask, __ATOMIC_RELAXED); }
uint32_t event_mask() { return __atomic_load_n(&mask, __ATOMIC_RELAXED); }
void set_cpu_mask(uint64_t mask_bits) { __atomic_store_n(&cpus, mask_bits, __ATOMIC_RELAXED); }
uint64_t cpu_mask() { return __atomic_load_n(&cpus, __ATOMIC_RELAXED); }

void record(uint32_t event, const uint32_t* extra, unsigned count) {
  const unsigned cpu = per_cpu::this_cpu();
  trace::TraceRing* ring = ring_of(cpu);
  if (!ring || !(cpu_mask() >> cpu & 1) || !trace::event_mask_admits(event_mask(), event)) return;
  trace::RecordFields fields;
  fields.event = event;
  fields.has_tsc = true;
  fields.extra_count = count;
  for (unsigned i = 0; i < count && i < trace::kMaxExtraWords; ++i) fields.extra[i] = extra[i];
  const Running who = running();
  trace::TraceRing::Context context{who.domain, who.vcpu};
  // As Xen: the consumer is told once per crossing of half the buffer, with VIRQ_TBUF, a global
  // VIRQ that goes to dom0 (Xen's xentrace sleeps on it). Sent after the record is complete and
  // with interrupts as they were, so anything the delivery records nests safely.
  const uint64_t flags = cpu::save_and_disable_interrupts();
  fields.tsc = cpu::rdtsc();  // read with interrupts off: the ring's records stay in TSC order
  const uint32_t high_water = ring->size() / 2;
  const bool below_high_water = ring->unconsumed_bytes() < high_water;
  ring->write(fields, context);
  const bool crossed = below_high_water && ring->unconsumed_bytes() >= high_water;
  cpu::restore_interrupts(flags);
  if (quiet[cpu]) {
    if (crossed) __atomic_store_n(&notify_deferred, true, __ATOMIC_RELAXED);
  } else if (crossed || (__atomic_load_n(&notify_deferred, __ATOMIC_RELAXED) &&
                         __atomic_exchange_n(&notify_deferred, false, __ATOMIC_RELAXED))) {
    notify_consumer();
  }
}

}  // namespace trace_buffers
