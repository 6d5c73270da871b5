#include "kernel/physical_memory.h"

namespace kernel {

pv::PageTableSlot table_slot(Mfn table, unsigned index, Level level) {
  uint64_t offset = uint64_t{index} * sizeof(uint64_t);
  return pv::PageTableSlot{table.machine_address() + offset,
                           reinterpret_cast<volatile uint64_t*>(mfn_to_va(table) + offset), level};
}

bool walk(Mfn root, uint64_t va, Level level, pv::PageTableSlot& slot) {
  pv::ops.flush();  // batched entries must be visible before we read tables
  Mfn table = root;
  for (int current = 4;; --current) {
    Level current_level = static_cast<Level>(current);
    slot = table_slot(table, lib::table_index(va, current_level), current_level);
    if (current_level == level) return true;
    PageTableEntry entry = read_entry(slot);
    if (entry.none() || entry.large()) return false;
    table = entry.mfn();
  }
}

}  // namespace kernel
