// Whose frames an mmu_update may map, and whose page tables it updates: its `foreigndom`
// argument, resolved as Xen 4.17's do_mmu_update resolves it (pt_dom, get_pg_owner, then the
// XSM check of the default policy). Pure, unit-tested on the host.
#pragma once
#include "mm/domain_identity.h"

namespace mm {

struct PageOwnerResult {
  int error = 0;                 // -ESRCH: no such domain, or the caller named itself
  domid_t owner = DOMID_SELF;    // for MmuContext::page_owner
  bool needs_privilege = false;  // the first request fails with -EPERM for others
  // Whose page tables the requests update: DOMID_SELF (the caller's) or another domain
  // (the domain builder's way on Xen). Another domain's needs privilege too.
  domid_t table_owner = DOMID_SELF;
  // The -ESRCH is for the table owner (pt_dom names no domain): Xen's do_mmu_update refuses
  // that before it writes its done count, a missing page owner after (done = 0).
  bool table_owner_missing = false;
};

// `foreigndom`: bits 15:0 the page owner (DOMID_SELF, DOMID_IO, DOMID_XEN or a domain id),
// bits 31:16 one plus the id of the domain whose page tables are updated (0: the caller's;
// the caller's own id + 1 is the caller too). `exists` says whether a domain id is in use.
// As Xen, the table owner is looked up first, and the page owner is compared with the
// caller (not with the table owner) when it names itself.
PageOwnerResult resolve_page_owner(DomainIdentity caller, uint32_t foreigndom, bool (*exists)(domid_t));

}  // namespace mm
