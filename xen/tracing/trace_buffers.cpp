#include "tracing/trace_buffers.h"
#include "mm/xen_abi.h"
#include "common/placement_new.h"
#include <xen/trace.h>
#include "arch/x86/cpu/registers.h"
#include "domain/domain.h"
#include "domain/event_channels.h"
#include "hypercall/dispatch.h"
#include "console/console.h"
#include "memory/boot_memory.h"
#include "memory/machine.h"
#include "time/clock.h"
#include "trace/format/event_mask.h"
#include "trace/format/events.h"
#include "trace/format/ring.h"

namespace trace_buffers {
namespace {
bool recording = false;  // enabled, allocated and CPU 0 in the CPU mask: the sites are jumps

constexpr uint64_t page = 4096;
// The t_info page lists every buffer frame after its two-halfword header: one page holds 1022.
constexpr uint32_t max_pages = page / sizeof(uint32_t) - 2;

uint32_t pages_per_cpu = 0;  // 0 until XEN_SYSCTL_TBUFOP_set_size allocates the buffers
uint32_t event_mask = TRC_ALL;
uint64_t cpu_mask = ~0ULL;
bool allocated = false;
uint64_t t_info_mfn = 0;
uint64_t first_buffer_mfn = 0;
alignas(trace::TraceRing) uint8_t ring_storage[sizeof(trace::TraceRing)];
trace::TraceRing* ring = nullptr;

// One CPU runs guests: CPU 0's buffer is the only one, its frames listed in t_info.
bool allocate() {
  boot::FrameAllocator& frames = boot_memory::allocator();
  uint64_t first;
  if (frames.allocate_contiguous(pages_per_cpu, 1, first) != boot::FrameAllocatorError::none) return false;
  uint64_t info = boot_memory::allocate_frame(DOMID_XEN);
  if (!info) {
    frames.free_contiguous(first, pages_per_cpu);
    return false;
  }
  mm::FrameTable& table = boot_memory::frame_table();
  for (uint64_t i = 0; i < pages_per_cpu; ++i) {
    table.assign(first + i, DOMID_XEN);
    table.info(first + i).shared_with_privileged = true;
    __builtin_memset(machine::to_virtual(((first + i) * page)), 0, page);
  }
  table.info(info).shared_with_privileged = true;
  table.info(info).shared_read_only = true;  // as Xen: tools read t_info, only the rings are theirs to write
  auto* t_info = machine::to_virtual<struct t_info>(info * page);
  t_info->tbuf_size = uint16_t(pages_per_cpu);
  constexpr uint16_t list_offset = 2;  // in uint32 units after the header (tbuf_size + one offset)
  t_info->mfn_offset[0] = list_offset;
  auto* mfn_list = reinterpret_cast<uint32_t*>(t_info) + list_offset;
  for (uint32_t i = 0; i < pages_per_cpu; ++i) mfn_list[i] = uint32_t(first + i);
  auto* header = machine::to_virtual<t_buf>(first * page);
  ring = new (ring_storage) trace::TraceRing(header, header + 1, uint32_t(pages_per_cpu * page - sizeof(t_buf)));
  ring->reset();
  t_info_mfn = info;
  first_buffer_mfn = first;
  allocated = true;
  return true;
}

// As Xen: the consumer is told once per crossing of half the buffer, with VIRQ_TBUF, a global
// VIRQ that goes to dom0 (Xen's xentrace sleeps on it). Sent after the record is complete, so
// anything the delivery records nests safely.
uint32_t high_water_bytes() { return ring->size() / 2; }

void notify_consumer() {
  Domain* dom0 = domains::dom0();
  if (dom0 && dom0->alive()) event_channels::send_virq(dom0->vcpu0, VIRQ_TBUF);
}

void set_recording(bool on) {
  if (on == recording) return;
  recording = on;
  if constexpr (!trace_points::compiled_in) return;
  trace_points::switch_all(on);
  hypercall::trace_guest_calls(on);  // the one trace site that is a table, not a NOP
}
}  // namespace

// As Xen's tb_set_size: a one-shot allocation. Another size later is -EINVAL, the same size
// again -EBUSY; a size beyond what t_info can list is reduced to the maximum.
long set_size(uint32_t pages) {
  if (allocated) return pages == pages_per_cpu ? -XEN_EBUSY : -XEN_EINVAL;
  if (pages == 0) return -XEN_EINVAL;
  if (pages > max_pages) {
    printk("xentrace: requested number of %u pages reduced to %u\n", pages, max_pages);
    pages = max_pages;
  }
  pages_per_cpu = pages;
  if (!allocate()) {
    pages_per_cpu = 0;
    return -XEN_ENOMEM;
  }
  return enable();  // as Xen's alloc_trace_bufs: recording starts once the buffers exist
}

long enable() {
  if (!allocated) return -XEN_EINVAL;  // as Xen: the size must be set first
  if (recording) return 0;
  set_recording((cpu_mask & 1) != 0);
  // The first record says how fast the TSC runs, so tools can turn cycles into time.
  uint64_t hz = system_clock::tsc_hz();
  trace::event(trace::events::kTscFrequency, trace::low(hz), trace::high(hz));
  return 0;
}

long disable() {
  set_recording(false);
  return 0;
}

void set_event_mask(uint32_t mask) { event_mask = mask; }
void set_cpu_mask(uint64_t mask) {
  cpu_mask = mask;
  if (allocated && !(mask & 1)) set_recording(false);
}

Info info() { return Info{allocated ? t_info_mfn : 0, allocated ? uint32_t(page) : 0, event_mask}; }

void record(uint32_t event, const uint32_t* extra, unsigned count) {
  if (!ring || !trace::event_mask_admits(event_mask, event)) return;
  trace::RecordFields fields;
  fields.event = event;
  fields.has_tsc = true;
  fields.tsc = cpu::rdtsc();
  fields.extra_count = count;
  for (unsigned i = 0; i < count && i < trace::kMaxExtraWords; ++i) fields.extra[i] = extra[i];
  Vcpu* vcpu = domains::current();
  trace::TraceRing::Context context{uint16_t(vcpu ? vcpu->domain->id : DOMID_IDLE), uint16_t(vcpu ? vcpu->id : 0)};
  bool below_high_water = ring->unconsumed_bytes() < high_water_bytes();
  ring->write(fields, context);
  if (below_high_water && ring->unconsumed_bytes() >= high_water_bytes()) notify_consumer();
}

}  // namespace trace_buffers
