#include "control/domctl_rules.h"

#include <gtest/gtest.h>

namespace {
using namespace control;
constexpr uint32_t kVersion = XEN_DOMCTL_INTERFACE_VERSION;

TEST(DomctlRules, InterfaceVersionIs0x15) {
  EXPECT_EQ(kVersion, 0x15u);
  EXPECT_EQ(check_domctl_version(0x15), 0);
  EXPECT_EQ(check_domctl_version(0x14), -XEN_EACCES);
  EXPECT_EQ(check_domctl_version(0x16), -XEN_EACCES);
  EXPECT_EQ(check_domctl_version(0), -XEN_EACCES);
  EXPECT_EQ(check_sysctl_version(XEN_SYSCTL_INTERFACE_VERSION), 0);
  EXPECT_EQ(check_sysctl_version(XEN_SYSCTL_INTERFACE_VERSION - 1), -XEN_EACCES);
}

// do_domctl's order: version, then the named domain, then privilege.
TEST(DomctlRules, AdmissionOrder) {
  EXPECT_EQ(domctl_admission(kVersion - 1, XEN_DOMCTL_pausedomain, false, false), -XEN_EACCES)
      << "a stale version comes first, even for a missing domain and an unprivileged caller";
  EXPECT_EQ(domctl_admission(kVersion, XEN_DOMCTL_pausedomain, false, false), -XEN_ESRCH)
      << "a missing domain comes before the privilege check";
  EXPECT_EQ(domctl_admission(kVersion, XEN_DOMCTL_pausedomain, true, false), -XEN_EPERM);
  EXPECT_EQ(domctl_admission(kVersion, XEN_DOMCTL_pausedomain, true, true), 0);
  EXPECT_EQ(domctl_admission(kVersion, XEN_DOMCTL_pausedomain, false, true), -XEN_ESRCH);
}

TEST(DomctlRules, GetdomaininfoNeedsNoExistingDomain) {
  EXPECT_EQ(domctl_admission(kVersion, XEN_DOMCTL_getdomaininfo, false, true), 0);
  EXPECT_EQ(domctl_admission(kVersion, XEN_DOMCTL_getdomaininfo, false, false), -XEN_EPERM)
      << "XSM_XS_PRIV: a domU is refused even for a domain that does not exist";
  EXPECT_EQ(domctl_admission(kVersion, XEN_DOMCTL_getdomaininfo, true, false), -XEN_EPERM)
      << "not even about itself (XSM_XS_PRIV has no self exception)";
  EXPECT_EQ(domctl_admission(kVersion, XEN_DOMCTL_createdomain, false, false), -XEN_EPERM);
}

TEST(DomctlRules, EveryServedSubOpIsPrivileged) {
  for (uint32_t cmd : {XEN_DOMCTL_pausedomain, XEN_DOMCTL_unpausedomain, XEN_DOMCTL_getdomaininfo, XEN_DOMCTL_max_mem,
                       XEN_DOMCTL_getvcpuinfo, XEN_DOMCTL_max_vcpus, XEN_DOMCTL_setdomainhandle,
                       XEN_DOMCTL_createdomain, XEN_DOMCTL_destroydomain, XEN_DOMCTL_setvcpucontext,
                       XEN_DOMCTL_getvcpucontext, XEN_DOMCTL_set_address_size, XEN_DOMCTL_get_address_size,
                       XEN_DOMCTL_hypercall_init, XEN_DOMCTL_setvcpuaffinity, XEN_DOMCTL_getvcpuaffinity}) {
    EXPECT_TRUE(domctl_served(cmd)) << cmd;
    EXPECT_EQ(domctl_access(cmd, false), -XEN_EPERM) << cmd;
    EXPECT_EQ(domctl_access(cmd, true), 0) << cmd;
  }
  EXPECT_EQ(domctl_access(0x7777, false), -XEN_EPERM) << "an unknown sub-op is refused to a domU first";
}

TEST(DomctlRules, UnservedAnswers) {
  EXPECT_FALSE(domctl_served(XEN_DOMCTL_shadow_op));
  EXPECT_EQ(domctl_unserved_answer(XEN_DOMCTL_shadow_op), -XEN_EOPNOTSUPP);
  EXPECT_EQ(domctl_unserved_answer(XEN_DOMCTL_gdbsx_domstatus), -XEN_EOPNOTSUPP);
  // Numbers Xen 4.17 does not know reach its arch_do_domctl default: -ENOSYS.
  EXPECT_EQ(domctl_unserved_answer(0), -XEN_ENOSYS);
  EXPECT_EQ(domctl_unserved_answer(6), -XEN_ENOSYS) << "getmemlist, removed";
  EXPECT_EQ(domctl_unserved_answer(XEN_DOMCTL_set_paging_mempool_size + 1), -XEN_ENOSYS);
  EXPECT_EQ(domctl_unserved_answer(0x7777), -XEN_ENOSYS);
  EXPECT_EQ(domctl_unserved_answer(XEN_DOMCTL_gdbsx_domstatus + 1), -XEN_ENOSYS);
}

TEST(DomctlRules, CopyBack) {
  EXPECT_TRUE(domctl_copies_back(XEN_DOMCTL_getdomaininfo));
  EXPECT_TRUE(domctl_copies_back(XEN_DOMCTL_getvcpuinfo));
  EXPECT_FALSE(domctl_copies_back(XEN_DOMCTL_pausedomain));
  EXPECT_FALSE(domctl_copies_back(XEN_DOMCTL_max_mem));
  EXPECT_FALSE(domctl_copies_back(XEN_DOMCTL_setdomainhandle));
  EXPECT_FALSE(domctl_copies_back(XEN_DOMCTL_max_vcpus));
  EXPECT_TRUE(domctl_copies_back(XEN_DOMCTL_createdomain)) << "the id chosen goes back in op->domain";
  EXPECT_TRUE(domctl_copies_back(XEN_DOMCTL_get_address_size));
  EXPECT_FALSE(domctl_copies_back(XEN_DOMCTL_destroydomain));
  EXPECT_FALSE(domctl_copies_back(XEN_DOMCTL_setvcpucontext));
}

TEST(DomctlRules, NotSelf) {
  EXPECT_EQ(check_not_self(true), -XEN_EINVAL);
  EXPECT_EQ(check_not_self(false), 0);
}

TEST(DomctlRules, MaxVcpusOnlyTheCreatedCount) {
  EXPECT_EQ(check_max_vcpus(false, 1, 1), 0);
  EXPECT_EQ(check_max_vcpus(false, 2, 1), -XEN_EINVAL);
  EXPECT_EQ(check_max_vcpus(false, 0, 1), -XEN_EINVAL);
  EXPECT_EQ(check_max_vcpus(true, 1, 1), -XEN_EINVAL) << "never on the caller itself";
  EXPECT_EQ(check_max_vcpus(false, 4, 4), 0);
  EXPECT_EQ(check_max_vcpus(false, 8, 4), -XEN_EINVAL) << "more than createdomain said";
  EXPECT_EQ(check_max_vcpus(false, 2, 4), -XEN_EINVAL) << "fewer than createdomain said";
}

TEST(DomctlRules, VcpuIndex) {
  EXPECT_EQ(check_vcpu_index(0, 1, true), 0);
  EXPECT_EQ(check_vcpu_index(1, 1, false), -XEN_EINVAL);
  EXPECT_EQ(check_vcpu_index(0xffffffff, 1, false), -XEN_EINVAL);
  EXPECT_EQ(check_vcpu_index(1, 4, false), -XEN_ESRCH) << "within max_vcpus but not created";
}

TEST(DomctlRules, MaxMemInKilobytes) {
  EXPECT_EQ(max_pages_from_kb(65536), 16384u);
  EXPECT_EQ(max_pages_from_kb(4095), 1023u) << "rounded down";
  EXPECT_EQ(max_pages_from_kb(0), 0u);
  EXPECT_EQ(max_pages_from_kb(~0ull), 0xffffffffu) << "kept to Xen's 32-bit max_pages";
  EXPECT_EQ(max_pages_from_kb(0xffffffffull << 2), 0xffffffffu);
  EXPECT_EQ(max_pages_from_kb(0x100000000ull << 2), 0xffffffffu);
}
}  // namespace
