#include "pv/rules/guest_page_walk.h"
#include "arch/x86/cpu/canonical.h"

namespace {
constexpr uint64_t present = 1, writable = 2, user = 4, superpage = 0x80;
constexpr uint64_t address_mask = 0x000ffffffffff000ULL;

using cpu::canonical;

constexpr unsigned index_at(uint64_t va, int level) { return (va >> (12 + 9 * (level - 1))) & 511; }
}  // namespace

GuestWalk walk_guest(const mm::MachineMemory& memory, uint64_t l4_mfn, uint64_t va, bool write) {
  GuestWalk result;
  if (!canonical(va) || l4_mfn >= memory.nr_frames) return result;
  uint64_t table = l4_mfn;
  for (int level = 4; level >= 1; --level) {
    auto* entries = reinterpret_cast<const uint64_t*>(memory.frame(table));
    uint64_t entry = entries[index_at(va, level)];
    if (!(entry & present) || !(entry & user)) return result;
    if (write && !(entry & writable)) return result;
    if (level > 1 && (entry & superpage)) return result;
    uint64_t next = (entry & address_mask) >> 12;
    if (next >= memory.nr_frames) return result;
    if (level == 1) {
      result.l1_entry_maddr = (table << 12) + index_at(va, 1) * 8;
      result.mfn = next;
      result.ok = true;
    }
    table = next;
  }
  return result;
}
