// mmu_update's foreigndom, resolved as Xen's get_pg_owner and default XSM policy do.
#include <gtest/gtest.h>
#include "mm/page_owner.h"

namespace mm {
namespace {
bool domains_0_and_1(domid_t id) { return id <= 1; }

const DomainIdentity dom0{0, true, false};
const DomainIdentity guest{1, false, false};

PageOwnerResult resolve(DomainIdentity who, uint32_t foreigndom) {
  return resolve_page_owner(who, foreigndom, domains_0_and_1);
}

TEST(MmPageOwner, SelfIsTheCaller) {
  for (DomainIdentity who : {dom0, guest}) {
    PageOwnerResult r = resolve(who, DOMID_SELF);
    EXPECT_EQ(r.error, 0);
    EXPECT_EQ(r.owner, DOMID_SELF);
    EXPECT_FALSE(r.needs_privilege);
  }
}

TEST(MmPageOwner, NamingItselfIsNoSuchDomain) {
  EXPECT_EQ(resolve(dom0, 0).error, -XEN_ESRCH);
  EXPECT_EQ(resolve(guest, 1).error, -XEN_ESRCH);
}

TEST(MmPageOwner, OtherDomainsNeedPrivilegeAndMustExist) {
  PageOwnerResult r = resolve(dom0, 1);
  EXPECT_EQ(r.error, 0);
  EXPECT_EQ(r.owner, 1);
  EXPECT_TRUE(r.needs_privilege);
  EXPECT_TRUE(resolve(guest, 0).needs_privilege);
  EXPECT_EQ(resolve(dom0, 7).error, -XEN_ESRCH);
  EXPECT_EQ(resolve(dom0, DOMID_INVALID).error, -XEN_ESRCH);
  EXPECT_EQ(resolve(dom0, DOMID_IDLE).error, -XEN_ESRCH);
}

TEST(MmPageOwner, DomidXenNeedsPrivilegeDomidIoDoesNot) {
  PageOwnerResult xen = resolve(guest, DOMID_XEN);
  EXPECT_EQ(xen.error, 0);
  EXPECT_EQ(xen.owner, DOMID_XEN);
  EXPECT_TRUE(xen.needs_privilege);
  PageOwnerResult io = resolve(guest, DOMID_IO);
  EXPECT_EQ(io.error, 0);
  EXPECT_EQ(io.owner, DOMID_IO);
  EXPECT_FALSE(io.needs_privilege);
}

TEST(MmPageOwner, TableOwnerInTheHighHalf) {
  PageOwnerResult self = resolve(dom0, (1u << 16) | DOMID_SELF);
  EXPECT_EQ(self.error, 0) << "domain 0 + 1: the caller itself";
  EXPECT_EQ(self.table_owner, DOMID_SELF);
  EXPECT_FALSE(self.needs_privilege);
  EXPECT_EQ(resolve(guest, (2u << 16) | DOMID_XEN).owner, DOMID_XEN);
  EXPECT_EQ(resolve(dom0, (0xffffu << 16) | DOMID_SELF).error, -XEN_ESRCH) << "no domain 0xfffe";
  EXPECT_EQ(resolve(dom0, (8u << 16) | DOMID_SELF).error, -XEN_ESRCH) << "no domain 7";
}

// Xen's do_mmu_update refuses a missing table owner before it writes its done count, a missing
// page owner after: the result says which.
TEST(MmPageOwner, AMissingTableOwnerIsToldApartFromAMissingPageOwner) {
  EXPECT_TRUE(resolve(dom0, (8u << 16) | DOMID_SELF).table_owner_missing) << "no domain 7";
  EXPECT_TRUE(resolve(dom0, (0xffffu << 16) | 1).table_owner_missing) << "whatever the page owner";
  EXPECT_FALSE(resolve(dom0, (2u << 16) | 7).table_owner_missing) << "tables of domain 1, no domain 7";
  EXPECT_FALSE(resolve(dom0, 7).table_owner_missing);
  EXPECT_FALSE(resolve(guest, 1).table_owner_missing) << "naming itself as page owner";
}

// Xen's domain builder: dom0 updates domain 1's tables, mapping domain 1's frames.
TEST(MmPageOwner, AnotherDomainsTablesNeedPrivilege) {
  PageOwnerResult r = resolve(dom0, (2u << 16) | 1);
  EXPECT_EQ(r.error, 0);
  EXPECT_EQ(r.table_owner, 1);
  EXPECT_EQ(r.owner, 1) << "the page owner may be the table owner (it is not the caller)";
  EXPECT_TRUE(r.needs_privilege);
  PageOwnerResult own_frames = resolve(dom0, (2u << 16) | DOMID_SELF);
  EXPECT_EQ(own_frames.error, 0);
  EXPECT_EQ(own_frames.table_owner, 1);
  EXPECT_EQ(own_frames.owner, DOMID_SELF) << "DOMID_SELF is the caller's frames";
  EXPECT_TRUE(own_frames.needs_privilege);
  PageOwnerResult from_guest = resolve(guest, (1u << 16) | DOMID_SELF);
  EXPECT_EQ(from_guest.error, 0) << "found; the XSM check refuses it on the first request";
  EXPECT_EQ(from_guest.table_owner, 0);
  EXPECT_TRUE(from_guest.needs_privilege);
  EXPECT_EQ(resolve(dom0, (2u << 16) | 0).error, -XEN_ESRCH) << "the page owner naming the caller";
}
}  // namespace
}  // namespace mm
