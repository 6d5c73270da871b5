#include "memory/boot_memory.h"
#include "perf/perf_counters.h"
#include "common/placement_new.h"
#include "arch/x86/layout.h"
#include "console/console.h"
#include "memory/hypervisor_page_tables.h"
#include "memory/machine.h"
#include "arch/x86/cpu/per_cpu.h"
#include "arch/x86/cpu/registers.h"
#include "arch/x86/platform/cross_cpu.h"
#include "mm/domain_identity.h"
#include "trace/format/events.h"
#include "tracing/trace_buffers.h"

extern "C" char __image_start[], __image_end[];

namespace boot_memory {
namespace detail {
mm::FrameTable* frames;
mm::MachToPhysTable machine_to_phys;
mm::HypervisorL4Slots slots;
}  // namespace detail

namespace {
constexpr uint64_t page = 4096;
constexpr uint64_t directmap_limit = 4ULL << 30;  // what the boot page tables map
constexpr unsigned max_ranges = 64;

Module modules[max_modules];
unsigned nr_modules;
unsigned nr_dropped_modules;
boot::PhysicalRange ram[max_ranges];
unsigned nr_ram;
// Every module is a reserved range, besides the firmware's, the image and the boot structures.
constexpr unsigned max_reserved = max_ranges + max_modules;
boot::PhysicalRange reserved[max_reserved];
unsigned nr_reserved;
boot::FrameAllocator frame_allocator;
alignas(mm::FrameTable) uint8_t frame_table_storage[sizeof(mm::FrameTable)];
using detail::frames;
using detail::machine_to_phys;
using detail::slots;

uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) & ~(a - 1); }

void add_reserved(uint64_t start, uint64_t end) {
  if (nr_reserved < max_reserved) reserved[nr_reserved++] = {start & ~(page - 1), round_up(end, page)};
}

bool read_memory_map(const boot::MultibootInfo& info) {
  boot::MemoryMapEntry entries[max_ranges];
  size_t count = 0;
  boot::MultibootError error = info.collect_memory_map(entries, max_ranges, count);
  if (error != boot::MultibootError::none) {
    printk("memory map: %s\n", boot::describe(error));
    return false;
  }
  for (size_t i = 0; i < count && i < max_ranges; ++i) {
    const auto& e = entries[i];
    machine::add_e820({e.base, e.length, e.type});
    printk(" %016lx - %016lx (%s)\n", e.base, e.end(), e.is_available() ? "usable" : "reserved");
    if (!e.is_available() || e.base >= directmap_limit) continue;
    uint64_t end = e.end() < directmap_limit ? e.end() : directmap_limit;
    if (e.end() > directmap_limit) printk("  RAM above 4 GiB ignored (direct map covers 4 GiB)\n");
    ram[nr_ram++] = {e.base, end};
  }
  return nr_ram > 0;
}

bool read_modules(const boot::MultibootInfo& info) {
  nr_modules = info.module_count();
  if (nr_modules > max_modules) {
    nr_dropped_modules = nr_modules - max_modules;
    nr_modules = max_modules;
  }
  for (unsigned i = 0; i < nr_modules; ++i) {
    boot::MultibootModule m;
    if (info.module(i, m) != boot::MultibootError::none) return false;
    modules[i].start = m.start;
    modules[i].end = m.end;
    boot::MultibootString text;
    if (info.module_command_line(m, text) == boot::MultibootError::none && text.text) {
      uint64_t n =
          text.length < sizeof(modules[i].command_line) - 1 ? text.length : sizeof(modules[i].command_line) - 1;
      __builtin_memcpy(modules[i].command_line, text.text, n);
    }
    add_reserved(m.start, m.end);
  }
  return true;
}

uint64_t highest_ram_frame() {
  uint64_t end = 0;
  for (unsigned i = 0; i < nr_ram; ++i)
    if (ram[i].end > end) end = ram[i].end;
  return end / page;
}

bool init_allocator(uint64_t nr_frames) {
  uint64_t bytes = boot::FrameAllocator::storage_words_for(nr_frames) * 8;
  boot::PhysicalRange storage;
  if (!boot::find_free_region(ram, nr_ram, reserved, nr_reserved, bytes, page, storage)) return false;
  add_reserved(storage.start, storage.end);
  auto* words = machine::to_virtual<uint64_t>(storage.start);
  boot::FrameAllocatorError error =
      frame_allocator.init(words, bytes / 8, nr_frames, ram, nr_ram, reserved, nr_reserved);
  if (error != boot::FrameAllocatorError::none) {
    printk("frame allocator: %s\n", boot::describe(error));
    return false;
  }
  return true;
}

// Every frame gets its owner: free RAM stays unowned for the allocator to hand out; the image,
// the allocator's bitmaps and the frame table are the hypervisor's; what is not RAM (the first
// MiB, holes, firmware ranges) is I/O memory, which only a privileged domain may map, as in Xen.
// Boot modules are RAM owned by no one: dom0 gets copies of them.
void assign_boot_owners(uint64_t nr_frames) {
  for (uint64_t mfn = 0; mfn < nr_frames; ++mfn) {
    if (frame_allocator.is_free(mfn)) continue;
    uint64_t address = mfn * page;
    bool is_module = false;
    for (unsigned i = 0; i < nr_modules; ++i)
      if (address >= (modules[i].start & ~(page - 1)) && address < modules[i].end) is_module = true;
    bool is_ram = address >= 0x100000;
    if (is_ram) {
      is_ram = false;
      for (unsigned i = 0; i < nr_ram; ++i)
        if (address >= ram[i].start && address < ram[i].end) is_ram = true;
    }
    if (!is_ram)
      frames->assign(mfn, DOMID_IO);
    else if (!is_module)
      frames->assign(mfn, DOMID_XEN);
  }
}

// A guest frame given back may still be reachable through a stale TLB entry of the domain that
// mapped it (removing a mapping does not flush by itself, as on Xen, which keeps a flush
// timestamp per page for this): the next allocation flushes first (before_reuse) the CPUs that
// have not flushed since the latest such release. The flush clock's value then (0: none since
// before_reuse last looked), kept by atomic operations: frames are released on any CPU.
uint64_t release_stamp = 0;

bool init_frame_table(uint64_t nr_frames) {
  uint64_t table_frames = round_up(nr_frames * sizeof(mm::PageInfo), page) / page;
  uint64_t first;
  if (frame_allocator.allocate_contiguous(table_frames, 1, first) != boot::FrameAllocatorError::none) return false;
  auto* infos = machine::to_virtual<mm::PageInfo>(first * page);
  frames = new (frame_table_storage)
      mm::FrameTable(infos, nr_frames, mm::MachineMemory{reinterpret_cast<uint8_t*>(DIRECTMAP_VIRT_START), nr_frames});
  frames->reset();
  assign_boot_owners(nr_frames);
  printk("Frame table: %lu frames, %lu KiB at %lx\n", nr_frames, table_frames * 4, first * page);
  return true;
}

uint64_t new_hypervisor_frame() { return allocate_frame(DOMID_XEN); }

bool init_m2p(uint64_t nr_frames) {
  uint64_t m2p_frames = round_up(nr_frames * 8, page) / page;
  uint64_t first;
  if (frame_allocator.allocate_contiguous(m2p_frames, 1, first) != boot::FrameAllocatorError::none) return false;
  for (uint64_t i = 0; i < m2p_frames; ++i) frames->assign(first + i, DOMID_XEN);
  machine_to_phys.entries = machine::to_virtual<uint64_t>(first * page);
  machine_to_phys.nr_entries = nr_frames;
  for (uint64_t i = 0; i < m2p_frames * (page / 8); ++i) machine_to_phys.entries[i] = invalid_m2p_entry;
  constexpr uint64_t user_read_only = 4 | (1ULL << 63);  // U, NX; not writable
  return hypervisor_page_tables::map(RO_MPT_VIRT_START, first, m2p_frames, user_read_only, new_hypervisor_frame);
}
}  // namespace

bool init(const boot::MultibootInfo& info) {
  printk("Physical memory map:\n");
  if (!read_memory_map(info) || !read_modules(info)) return false;
  add_reserved(0, 0x100000);  // real-mode memory, BIOS data, option ROMs
  add_reserved(uint64_t(__image_start) - XEN_VIRT_START, uint64_t(__image_end) - XEN_VIRT_START);
  uint64_t nr_frames = highest_ram_frame();
  machine::set_nr_frames(nr_frames);
  if (!init_allocator(nr_frames) || !init_frame_table(nr_frames) || !init_m2p(nr_frames)) return false;
  printk("Memory: %lu MiB usable, %lu MiB free after boot structures\n", frame_allocator.usable_count() / 256,
         frame_allocator.free_count() / 256);
  return true;
}

unsigned module_count() { return nr_modules; }
unsigned modules_dropped() { return nr_dropped_modules; }
const Module& module(unsigned index) { return modules[index]; }
boot::FrameAllocator& allocator() { return frame_allocator; }

void seal_hypervisor_slots() {
  uint64_t* l4 = hypervisor_page_tables::l4();
  for (unsigned i = 0; i < mm::kHypervisorSlotCount; ++i)
    slots.entries[i] = mm::PageTableEntry(l4[mm::kFirstHypervisorSlot + i]);
}

void free_guest_frame(uint64_t mfn) {
  set_m2p(mfn, invalid_m2p_entry);
  frame_allocator.free(mfn);  // refused (and kept out of use) if it never was the allocator's
  const uint64_t now = frames ? frames->flush_clock().now() : 1;
  uint64_t stamp = __atomic_load_n(&release_stamp, __ATOMIC_RELAXED);
  while (stamp < now &&
         !__atomic_compare_exchange_n(&release_stamp, &stamp, now, true, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
  }
}

namespace {
uint64_t flush_and_tick() {
  const uint64_t tick = frames ? frames->flush_clock().tick() : 0;
  cpu::flush_tlb_local();
  if (frames) frames->flush_clock().flushed(per_cpu::this_cpu(), tick);  // so type changes know it happened
  return tick;
}

// A remote CPU's flush for `sender`: its FLUSH_IPI_RECEIVE record goes to this CPU's trace buffer.
void flush_for(void* sender) {
  const uint64_t tick = flush_and_tick();
  trace::event(trace::events::kFlushIpiReceive, uint32_t(reinterpret_cast<uintptr_t>(sender)), uint32_t(tick));
}
}  // namespace

void flush_tlb_this_cpu() { flush_and_tick(); }

void flush_tlb_cpus(CpuMask mask) {
  const unsigned self = per_cpu::this_cpu();
  if (mask.contains(self)) flush_tlb_this_cpu();
  const CpuMask others = mask.without(self);
  if (others.empty()) return;
  // The sender's FLUSH_IPI_SEND in its own buffer (trace/EVENTS.md): whom it asks, and when.
  trace::event(trace::events::kFlushIpiSend, uint32_t(others.bits()),
               uint32_t(frames ? frames->flush_clock().now() : 0));
  cross_cpu::on_cpus(others, flush_for, reinterpret_cast<void*>(uintptr_t(self)), true);
}

void before_reuse() {
  uint64_t stamp = __atomic_load_n(&release_stamp, __ATOMIC_ACQUIRE);
  if (stamp == 0) return;
  if (frames) {
    const CpuMask holding = frames->flush_clock().cpus_holding(stamp, CpuMask::first(MAX_CPUS));
    if (!holding.empty()) flush_tlb_cpus(holding);
  } else {
    cpu::flush_tlb_local();
  }
  // A release since keeps its (later) stamp for the next allocation.
  __atomic_compare_exchange_n(&release_stamp, &stamp, uint64_t{0}, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

namespace {
void zero_frame(uint64_t mfn) { __builtin_memset(machine::to_virtual(mfn * page), 0, page); }
void zero_when_allocated(uint64_t mfn) {
  zero_frame(mfn);
  perf::add(perf::Counter::frames_zeroed_when_allocated);
}
void zero_while_idle(uint64_t mfn) {
  zero_frame(mfn);
  perf::add(perf::Counter::frames_scrubbed_idle);
}
}  // namespace

uint64_t allocate_frame(domid_t owner) {
  before_reuse();
  uint64_t mfn;
  if (frame_allocator.allocate_zeroed(mfn, zero_when_allocated) != boot::FrameAllocatorError::none) return 0;
  if (frames && !frames->assign(mfn, owner)) {  // a dying owner, or none: it takes nothing
    frame_allocator.free(mfn);
    return 0;
  }
  return mfn;
}

bool allocate_zeroed_run(uint64_t count, uint64_t alignment, uint64_t& first) {
  before_reuse();
  return frame_allocator.allocate_contiguous_zeroed(count, alignment, first, zero_when_allocated) ==
         boot::FrameAllocatorError::none;
}

// The flush first: a stale translation of the frame's last owner must not write into it once
// it is clean (allocation flushes for the same reason, before_reuse).
bool scrub_free_frame() {
  before_reuse();
  return frame_allocator.scrub_one(zero_while_idle);
}
}  // namespace boot_memory
