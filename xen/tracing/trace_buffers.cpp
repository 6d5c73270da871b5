#include "tracing/trace_buffers.h"
#include "mm/xen_abi.h"
#include "common/placement_new.h"
#include <xen/trace.h>
#include "arch/x86/cpu/registers.h"
#include "domain/domain.h"
#include "memory/boot_memory.h"
#include "memory/machine.h"
#include "time/clock.h"
#include "trace/format/events.h"
#include "trace/format/ring.h"

namespace trace_buffers {
namespace {
bool recording = false;  // enabled, allocated and CPU 0 in the CPU mask: the sites are jumps

constexpr uint64_t page = 4096;
constexpr uint32_t default_pages = 32;
constexpr uint32_t max_pages = 1024;

uint32_t pages_per_cpu = default_pages;
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
  if (!info) return false;
  mm::FrameTable& table = boot_memory::frame_table();
  for (uint64_t i = 0; i < pages_per_cpu; ++i) {
    table.assign(first + i, DOMID_XEN);
    table.info(first + i).shared_with_privileged = true;
    __builtin_memset(machine::to_virtual(((first + i) * page)), 0, page);
  }
  table.info(info).shared_with_privileged = true;
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

void set_recording(bool on) {
  if (on == recording) return;
  recording = on;
  trace_points::switch_all(on);
}
}  // namespace

long set_size(uint32_t pages) {
  if (allocated) return -XEN_EBUSY;
  if (pages == 0 || pages > max_pages) return -XEN_EINVAL;
  pages_per_cpu = pages;
  return 0;
}

long enable() {
  if (!allocated && !allocate()) return -XEN_ENOMEM;
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
  // Xen's mask test: the event's class bits must be in the mask.
  if (!ring || ((event >> TRC_CLS_SHIFT) & (event_mask >> TRC_CLS_SHIFT)) == 0) return;
  trace::RecordFields fields;
  fields.event = event;
  fields.has_tsc = true;
  fields.tsc = cpu::rdtsc();
  fields.extra_count = count;
  for (unsigned i = 0; i < count && i < trace::kMaxExtraWords; ++i) fields.extra[i] = extra[i];
  Vcpu* vcpu = domains::current();
  trace::TraceRing::Context context{uint16_t(vcpu ? vcpu->domain->id : DOMID_IDLE), uint16_t(vcpu ? vcpu->id : 0)};
  ring->write(fields, context);
}

}  // namespace trace_buffers
