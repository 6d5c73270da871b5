#include "control/domid_allocation.h"

namespace control {
namespace {
constexpr uint32_t usable_ids = DOMID_FIRST_RESERVED - 1;  // 1 .. DOMID_FIRST_RESERVED - 1

domid_t next_after(domid_t id) { return id + 1u >= DOMID_FIRST_RESERVED ? domid_t(1) : domid_t(id + 1); }
}  // namespace

bool domid_free(domid_t id, DomainIdInUse in_use, const void* table) {
  return id < DOMID_FIRST_RESERVED && !in_use(table, id);
}

DomidAllocator::Choice DomidAllocator::choose(uint32_t requested, DomainIdInUse in_use, const void* table) {
  if (requested > 0 && requested < DOMID_FIRST_RESERVED) {
    domid_t id = domid_t(requested);
    return domid_free(id, in_use, table) ? Choice{0, id} : Choice{-XEN_EEXIST, DOMID_INVALID};
  }
  // Every id from the one after the rover round to the rover itself, once: Xen's loop, with
  // a bound (Xen's never ends when the table is full and the rover is 0 or 1; it never is).
  domid_t id = rover_;
  for (uint32_t tried = 0; tried < usable_ids; ++tried) {
    id = next_after(id);
    if (!domid_free(id, in_use, table)) continue;
    rover_ = id;
    return Choice{0, id};
  }
  return Choice{-XEN_ENOMEM, DOMID_INVALID};
}
}  // namespace control
