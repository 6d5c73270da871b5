#include "arch/x86/cpu/stacks.h"
#include "arch/x86/cpu/cpu_tables.h"
#include "arch/x86/layout.h"

namespace stacks {
namespace {
constexpr uint64_t page = 4096;
constexpr uint64_t ist_bytes = 2 * page;
constexpr uint64_t gdt_pages = (GDT_BYTES + page - 1) / page;
constexpr uint64_t mapping_flags = 1 | 2 | (1ULL << 63);  // present, writable, NX; never user

// CPU 0's. Entries from ring 3 land on this one. It is not the boot stack: the boot path's
// frames (holding the first guest frame) are live while enter_guest copies that frame to its top.
alignas(page) uint8_t entry_stack[STACK_BYTES];
alignas(page) uint8_t ist_stacks[ist_count][ist_bytes];

uint64_t entry_tops[MAX_CPUS] = {uint64_t(entry_stack + sizeof(entry_stack))};
uint64_t ist_tops[MAX_CPUS][ist_count] = {{uint64_t(ist_stacks[0] + ist_bytes), uint64_t(ist_stacks[1] + ist_bytes),
                                           uint64_t(ist_stacks[2] + ist_bytes), uint64_t(ist_stacks[3] + ist_bytes)}};

uint64_t image_mfn(const void* address) { return (uint64_t(address) - XEN_VIRT_START) / page; }
uint64_t window_of(unsigned cpu) { return STACKS_VIRT_START + uint64_t(cpu) * PER_CPU_WINDOW_BYTES; }

// Maps `bytes` of `stack` right above an unmapped guard page at `va`; returns the new top.
uint64_t map_guarded(uint64_t& va, const uint8_t* stack, uint64_t bytes, MapPages map) {
  va += page;  // the guard page stays unmapped
  if (!map(va, image_mfn(stack), bytes / page, mapping_flags)) return 0;
  va += bytes;
  return va;
}

// The same with fresh frames, one page at a time (they need not be contiguous).
uint64_t map_fresh(uint64_t& va, uint64_t bytes, MapPages map, FrameSource frame) {
  va += page;
  for (uint64_t done = 0; done < bytes; done += page, va += page) {
    uint64_t mfn = frame();
    if (!mfn || !map(va, mfn, 1, mapping_flags)) return 0;
  }
  return va;
}
}  // namespace

uint64_t entry_stack_top(unsigned cpu) { return cpu < MAX_CPUS ? entry_tops[cpu] : 0; }
uint64_t ist_stack_top(Ist ist, unsigned cpu) { return cpu < MAX_CPUS ? ist_tops[cpu][unsigned(ist) - 1] : 0; }

bool guard(MapPages map) {
  uint64_t va = window_of(0);
  uint64_t new_entry_top = map_guarded(va, entry_stack, sizeof(entry_stack), map);
  if (!new_entry_top) return false;
  uint64_t new_ist_tops[ist_count];
  for (unsigned i = 0; i < ist_count; ++i)
    if (!(new_ist_tops[i] = map_guarded(va, ist_stacks[i], ist_bytes, map))) return false;
  entry_tops[0] = new_entry_top;
  for (unsigned i = 0; i < ist_count; ++i) ist_tops[0][i] = new_ist_tops[i];
  cpu_tables::load_stacks(0);
  return true;
}

uint64_t* build_ap(unsigned cpu, MapPages map, FrameSource frame) {
  static_assert(page + STACK_BYTES + ist_count * (page + ist_bytes) + page + gdt_pages * page <= PER_CPU_WINDOW_BYTES);
  if (cpu == 0 || cpu >= MAX_CPUS) return nullptr;
  uint64_t va = window_of(cpu);
  uint64_t entry_top = map_fresh(va, STACK_BYTES, map, frame);
  if (!entry_top) return nullptr;
  uint64_t tops[ist_count];
  for (unsigned i = 0; i < ist_count; ++i)
    if (!(tops[i] = map_fresh(va, ist_bytes, map, frame))) return nullptr;
  uint64_t gdt_end = map_fresh(va, gdt_pages * page, map, frame);
  if (!gdt_end) return nullptr;
  entry_tops[cpu] = entry_top;
  for (unsigned i = 0; i < ist_count; ++i) ist_tops[cpu][i] = tops[i];
  return reinterpret_cast<uint64_t*>(gdt_end - gdt_pages * page);
}
}  // namespace stacks
