#include "kernel/process/copy_on_write.h"

namespace lib {

FaultAction fault_action(PageTableEntry entry, bool write, bool in_demand_region, unsigned references) {
  if (!entry.present()) return in_demand_region ? FaultAction::demand_zero : FaultAction::segfault;
  if (!write) return FaultAction::spurious;  // present entries are always readable by user
  if (entry.writable()) return FaultAction::spurious;
  if (!(entry.raw() & kCopyOnWrite)) return FaultAction::segfault;
  return references <= 1 ? FaultAction::make_writable : FaultAction::copy;
}

}  // namespace lib
