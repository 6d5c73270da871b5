// Pure: which id XEN_DOMCTL_createdomain gives a new domain, as Xen 4.17's do_domctl chooses
// it (xen/common/domctl.c): an id the caller names (1 .. DOMID_FIRST_RESERVED - 1) if no
// domain has it (-EEXIST otherwise); for 0 or a reserved id, the next free id after a rover
// that remembers the last one handed out, wrapping from DOMID_FIRST_RESERVED to 1 (-ENOMEM
// when every id is taken). Reserved ids are never handed out and never "in use".
#pragma once
#include "control/control_abi.h"

namespace control {
// Whether a domain holds `id` (the caller's domain table answers).
using DomainIdInUse = bool (*)(const void* table, domid_t id);

class DomidAllocator {
 public:
  struct Choice {
    long error = 0;  // 0, -EEXIST (the id asked for is in use) or -ENOMEM (no id free)
    domid_t id = DOMID_INVALID;
  };
  // The id for a domain created with op->domain == `requested`. The rover moves only when
  // the id is chosen here (not when the caller named one), as Xen's.
  Choice choose(uint32_t requested, DomainIdInUse in_use, const void* table);
  domid_t rover() const { return rover_; }

 private:
  domid_t rover_ = 0;
};

// Xen's is_free_domid: a reserved id is never free.
bool domid_free(domid_t id, DomainIdInUse in_use, const void* table);
}  // namespace control
