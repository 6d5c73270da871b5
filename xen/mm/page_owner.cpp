#include "mm/page_owner.h"

namespace mm {

namespace {
constexpr PageOwnerResult no_such_domain() { return PageOwnerResult{error(XEN_ESRCH), DOMID_SELF, false}; }
}  // namespace

PageOwnerResult resolve_page_owner(DomainIdentity caller, uint32_t foreigndom, bool (*exists)(domid_t)) {
    // Page tables of another domain (the domain builder's way on Xen) are not served yet: only
    // the caller itself may be named there.
    uint32_t table_owner = foreigndom >> 16;
    if (table_owner != 0 && table_owner - 1 != caller.id) return no_such_domain();
    domid_t named = domid_t(foreigndom & 0xffff);
    if (named == DOMID_SELF) return PageOwnerResult{0, DOMID_SELF, false};
    if (named == caller.id) return no_such_domain();  // Xen: "cannot specify itself as foreign domain"
    if (named == DOMID_IO) return PageOwnerResult{0, DOMID_IO, false};  // each I/O frame has its own check
    if (named == DOMID_XEN) return PageOwnerResult{0, DOMID_XEN, true};
    if (!is_guest_domain(named) || !exists(named)) return no_such_domain();
    return PageOwnerResult{0, named, true};
}

}  // namespace mm
