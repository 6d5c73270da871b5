#include "mm/page_owner.h"
#include "mm/error.h"

namespace mm {

namespace {
constexpr PageOwnerResult no_such_domain() { return PageOwnerResult{error(XEN_ESRCH), DOMID_SELF, false}; }

PageOwnerResult resolve_pg_owner(DomainIdentity caller, domid_t named, bool (*exists)(domid_t)) {
  if (named == DOMID_SELF) return PageOwnerResult{0, DOMID_SELF, false};
  if (named == caller.id) return no_such_domain();                    // Xen: "cannot specify itself as foreign domain"
  if (named == DOMID_IO) return PageOwnerResult{0, DOMID_IO, false};  // each I/O frame has its own check
  if (named == DOMID_XEN) return PageOwnerResult{0, DOMID_XEN, true};
  if (!is_guest_domain(named) || !exists(named)) return no_such_domain();
  return PageOwnerResult{0, named, true};
}
}  // namespace

PageOwnerResult resolve_page_owner(DomainIdentity caller, uint32_t foreigndom, bool (*exists)(domid_t)) {
  domid_t table_owner = DOMID_SELF;
  if (uint32_t pt_dom = foreigndom >> 16; pt_dom != 0) {
    const domid_t id = domid_t(pt_dom - 1);
    if (!is_guest_domain(id) || !exists(id)) {
      PageOwnerResult missing = no_such_domain();
      missing.table_owner_missing = true;
      return missing;
    }
    if (id != caller.id) table_owner = id;
  }
  PageOwnerResult result = resolve_pg_owner(caller, domid_t(foreigndom & 0xffff), exists);
  if (result.error) return result;
  result.table_owner = table_owner;
  if (table_owner != DOMID_SELF) result.needs_privilege = true;
  return result;
}

}  // namespace mm
