#include "kernel/memory/physical_memory.h"

namespace kernel {

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
