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
    EXPECT_EQ(resolve(dom0, (1u << 16) | DOMID_SELF).error, 0) << "domain 0 + 1: the caller itself";
    EXPECT_EQ(resolve(guest, (2u << 16) | DOMID_XEN).owner, DOMID_XEN);
    EXPECT_EQ(resolve(dom0, (2u << 16) | DOMID_SELF).error, -XEN_ESRCH) << "another domain's tables";
    EXPECT_EQ(resolve(dom0, (0xffffu << 16) | DOMID_SELF).error, -XEN_ESRCH);
}
}  // namespace
}  // namespace mm
