#include "tracing/control/trace_control.h"
#include "abi/xen_abi.h"
#include <xen/trace.h>
#include "console/console.h"
#include "memory/boot_memory.h"
#include "memory/machine.h"
#include "time/clock.h"
#include "trace/format/events.h"
#include "tracing/trace_buffers.h"

namespace trace_control {
namespace {
constexpr uint64_t page = 4096;
// The t_info page lists every buffer frame after its two-halfword header: one page holds 1022.
constexpr uint32_t max_pages = page / sizeof(uint32_t) - 2;

uint32_t pages_per_cpu = 0;  // 0 until XEN_SYSCTL_TBUFOP_set_size allocates the buffers
uint64_t cpu_mask = ~0ULL;
bool allocated = false;
uint64_t t_info_mfn = 0;

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
  trace_buffers::attach(machine::to_virtual<t_buf>(first * page), uint32_t(pages_per_cpu * page - sizeof(t_buf)));
  t_info_mfn = info;
  allocated = true;
  return true;
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
  if (trace_buffers::recording()) return 0;
  trace_buffers::set_recording((cpu_mask & 1) != 0);
  // The first record says how fast the TSC runs, so tools can turn cycles into time.
  uint64_t hz = system_clock::tsc_hz();
  trace::event(trace::events::kTscFrequency, trace::low(hz), trace::high(hz));
  return 0;
}

long disable() {
  trace_buffers::set_recording(false);
  return 0;
}

void set_cpu_mask(uint64_t mask) {
  cpu_mask = mask;
  if (allocated && !(mask & 1)) trace_buffers::set_recording(false);
}

Info info() { return Info{allocated ? t_info_mfn : 0, allocated ? uint32_t(page) : 0, trace_buffers::event_mask()}; }
}  // namespace trace_control
