// Whose frames an mmu_update may map: its `foreigndom` argument, resolved as Xen resolves it
// (get_pg_owner, then the XSM check of the default policy). Pure, unit-tested on the host.
#pragma once
#include "mm/domain_identity.h"

namespace mm {

struct PageOwnerResult {
    int error = 0;                 // -ESRCH: no such domain, or the caller named itself
    domid_t owner = DOMID_SELF;    // for MmuContext::page_owner
    bool needs_privilege = false;  // the first request fails with -EPERM for others
};

// `foreigndom`: bits 15:0 the page owner (DOMID_SELF, DOMID_IO, DOMID_XEN or a domain id),
// bits 31:16 one plus the id of the domain whose page tables are updated (0: the caller's).
// `exists` says whether a domain id is in use.
PageOwnerResult resolve_page_owner(DomainIdentity caller, uint32_t foreigndom, bool (*exists)(domid_t));

}  // namespace mm
