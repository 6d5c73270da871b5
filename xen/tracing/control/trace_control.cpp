#include "tracing/control/trace_control.h"
#include "abi/xen_abi.h"
#include <xen/trace.h>
#include "arch/x86/cpu/per_cpu.h"
#include "arch/x86/cpu/registers.h"
#include "arch/x86/platform/cross_cpu.h"
#include "arch/x86/platform/smp_boot.h"
#include "console/console.h"
#include "memory/boot_memory.h"
#include "memory/machine.h"
#include "time/clock.h"
#include "trace/format/events.h"
#include "trace/format/t_info_layout.h"
#include "tracing/trace_buffers.h"

namespace trace_control {
namespace {
namespace layout = trace::t_info_layout;
constexpr uint64_t page = 4096;

uint32_t pages_per_cpu = 0;  // 0 until XEN_SYSCTL_TBUFOP_set_size allocates the buffers
bool allocated = false;
uint64_t t_info_mfn = 0;
uint32_t t_info_pages = 0;  // Xen's t_info_pages: get_info's size is this many pages
uint64_t buffer_cpus = 0;   // the CPUs that have a buffer

void share(uint64_t first, uint64_t count, bool read_only) {
  mm::FrameTable& table = boot_memory::frame_table();
  for (uint64_t i = 0; i < count; ++i) {
    table.assign(first + i, DOMID_XEN);
    table.info(first + i).shared_with_privileged = true;
    table.info(first + i).shared_read_only = read_only;
    __builtin_memset(machine::to_virtual((first + i) * page), 0, page);
  }
}

// As Xen's alloc_trace_bufs: t_info sized for every possible CPU (Xen's nr_cpu_ids), in one
// contiguous piece; a buffer of pages_per_cpu pages for each online CPU, its frames listed in
// t_info at first_offset + cpu * pages. Our buffers' pages are contiguous (the ring is one data
// area); Xen's tools read them page by page from the list either way. All or nothing.
bool allocate() {
  boot::FrameAllocator& frames = boot_memory::allocator();
  const uint32_t cpus = smp_boot::possible_cpus();
  const uint32_t info_pages = layout::info_pages(cpus, pages_per_cpu);
  uint64_t info = 0;
  if (frames.allocate_contiguous(info_pages, 1, info) != boot::FrameAllocatorError::none) return false;
  uint64_t first[MAX_CPUS] = {};
  const CpuMask online = smp_boot::online_mask();
  for (unsigned cpu = 0; cpu < cpus && cpu < MAX_CPUS; ++cpu) {
    if (!online.contains(cpu)) continue;
    if (frames.allocate_contiguous(pages_per_cpu, 1, first[cpu]) != boot::FrameAllocatorError::none) {
      printk("xentrace: memory allocation failed on cpu %u\n", cpu);
      for (unsigned done = 0; done < cpu; ++done)
        if (first[done]) frames.free_contiguous(first[done], pages_per_cpu);
      frames.free_contiguous(info, info_pages);
      return false;
    }
  }
  share(info, info_pages, true);  // as Xen: tools read t_info, only the rings are theirs to write
  auto* t_info = machine::to_virtual<struct t_info>(info * page);
  auto* words = reinterpret_cast<uint32_t*>(t_info);
  t_info->tbuf_size = uint16_t(pages_per_cpu);
  for (unsigned cpu = 0; cpu < cpus && cpu < MAX_CPUS; ++cpu) {
    if (!first[cpu]) continue;
    share(first[cpu], pages_per_cpu, false);
    const uint32_t offset = layout::list_offset(cpus, pages_per_cpu, cpu);
    t_info->mfn_offset[cpu] = uint16_t(offset);
    for (uint32_t i = 0; i < pages_per_cpu; ++i) words[offset + i] = uint32_t(first[cpu] + i);
    trace_buffers::attach(cpu, machine::to_virtual<t_buf>(first[cpu] * page),
                          uint32_t(pages_per_cpu * page - sizeof(t_buf)));
    buffer_cpus |= uint64_t(1) << cpu;
  }
  printk("xentrace: %u t_info pages for %u trace pages on %u cpus\n", info_pages, pages_per_cpu, cpus);
  t_info_mfn = info;
  t_info_pages = info_pages;
  allocated = true;
  return true;
}

// Patching the trace points while other CPUs run (Xen patches its alternatives the same way,
// under stop_machine): every other online CPU waits in a cross-CPU call, interrupts off, until
// this one has rewritten the sites, then serialises before it runs on, so no CPU executes or
// fetches a site half written. Control operations come one at a time (the sysctl's callers
// are dom0's, and on_cpus takes one call at a time for the machine).
struct Rendezvous {
  uint32_t released;
  uint32_t left;
};
Rendezvous rendezvous;

void hold(void*) {
  while (!__atomic_load_n(&rendezvous.released, __ATOMIC_ACQUIRE)) asm volatile("pause");
  cpu::cpuid(0);  // serialising: fetch the patched bytes, not what was prefetched before
  __atomic_fetch_add(&rendezvous.left, 1, __ATOMIC_RELEASE);
}

void switch_recording(bool on) {
  if (on == trace_buffers::recording()) return;
  const CpuMask others = smp_boot::online_mask().without(per_cpu::this_cpu());
  if (others.empty()) return trace_buffers::set_recording(on);
  __atomic_store_n(&rendezvous.released, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&rendezvous.left, 0, __ATOMIC_RELAXED);
  cross_cpu::on_cpus(others, hold, nullptr, false);  // returns once every other CPU is in hold
  trace_buffers::set_recording(on);
  __atomic_store_n(&rendezvous.released, 1, __ATOMIC_RELEASE);
  while (__atomic_load_n(&rendezvous.left, __ATOMIC_ACQUIRE) != others.count()) asm volatile("pause");
}
}  // namespace

// As Xen's tb_set_size: a one-shot allocation. Another size later is -EINVAL, the same size
// again -EBUSY; a size beyond what t_info's 16-bit offsets can place for every CPU is reduced.
long set_size(uint32_t pages) {
  if (allocated) return pages == pages_per_cpu ? -XEN_EBUSY : -XEN_EINVAL;
  if (pages == 0) return -XEN_EINVAL;
  const uint32_t most = layout::most_pages(smp_boot::possible_cpus());
  if (pages > most) {
    printk("xentrace: requested number of %u pages reduced to %u\n", pages, most);
    pages = most;
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
  switch_recording(true);
  // The first record says how fast the TSC runs, so tools can turn cycles into time (in the
  // ring of the CPU enabling, if its bit is in the CPU mask).
  uint64_t hz = system_clock::tsc_hz();
  trace::event(trace::events::kTscFrequency, trace::low(hz), trace::high(hz));
  return 0;
}

long disable() {
  switch_recording(false);
  return 0;
}

// As Xen's tb_cpu_mask: which CPUs record; recording itself stays on or off.
void set_cpu_mask(uint64_t mask) { trace_buffers::set_cpu_mask(mask); }

Info info() {
  return Info{allocated ? t_info_mfn : 0, uint32_t(t_info_pages * page), trace_buffers::event_mask(), buffer_cpus};
}
}  // namespace trace_control
