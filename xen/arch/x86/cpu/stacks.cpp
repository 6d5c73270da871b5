#include "arch/x86/cpu/stacks.h"
#include "arch/x86/cpu/cpu_tables.h"
#include "arch/x86/layout.h"

namespace stacks {
namespace {
constexpr uint64_t page = 4096;
constexpr uint64_t ist_bytes = 2 * page;
constexpr uint64_t mapping_flags = 1 | 2 | (1ULL << 63);  // present, writable, NX; never user

// Entries from ring 3 land on this one. It is not the boot stack: the boot path's frames
// (holding the first guest frame) are live while enter_guest copies that frame to its top.
alignas(page) uint8_t entry_stack[STACK_BYTES];
alignas(page) uint8_t ist_stacks[ist_count][ist_bytes];

uint64_t entry_top = uint64_t(entry_stack + sizeof(entry_stack));
uint64_t ist_tops[ist_count] = {uint64_t(ist_stacks[0] + ist_bytes), uint64_t(ist_stacks[1] + ist_bytes),
                                uint64_t(ist_stacks[2] + ist_bytes), uint64_t(ist_stacks[3] + ist_bytes)};

uint64_t image_mfn(const void* address) { return (uint64_t(address) - XEN_VIRT_START) / page; }

// Maps `bytes` of `stack` right above an unmapped guard page at `va`; returns the new top.
uint64_t map_guarded(uint64_t& va, const uint8_t* stack, uint64_t bytes, MapPages map) {
  va += page;  // the guard page stays unmapped
  if (!map(va, image_mfn(stack), bytes / page, mapping_flags)) return 0;
  va += bytes;
  return va;
}
}  // namespace

uint64_t entry_stack_top() { return entry_top; }
uint64_t ist_stack_top(Ist ist) { return ist_tops[unsigned(ist) - 1]; }

bool guard(MapPages map) {
  uint64_t va = STACKS_VIRT_START;
  uint64_t new_entry_top = map_guarded(va, entry_stack, sizeof(entry_stack), map);
  if (!new_entry_top) return false;
  uint64_t new_ist_tops[ist_count];
  for (unsigned i = 0; i < ist_count; ++i)
    if (!(new_ist_tops[i] = map_guarded(va, ist_stacks[i], ist_bytes, map))) return false;
  entry_top = new_entry_top;
  for (unsigned i = 0; i < ist_count; ++i) ist_tops[i] = new_ist_tops[i];
  cpu_tables::load_stacks();
  return true;
}
}  // namespace stacks
