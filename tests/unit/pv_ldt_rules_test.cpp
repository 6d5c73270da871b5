#include <gtest/gtest.h>

#include "abi/xen_abi.h"
#include "pv/rules/ldt_rules.h"

namespace {
using ldt_rules::Ldt;

TEST(PvLdtRules, AnAlignedGuestAddressAndUpTo8192EntriesAreTaken) {
  Ldt ldt;
  EXPECT_EQ(ldt_rules::set_ldt(ldt, 0xffffc90000010000ull, 8192), 0);
  EXPECT_EQ(ldt, (Ldt{0xffffc90000010000ull, 8192}));
  EXPECT_EQ(ldt_rules::set_ldt(ldt, 0x7fffffff000ull, 1), 0);  // the lower half too
  EXPECT_EQ(ldt, (Ldt{0x7fffffff000ull, 1}));
}

TEST(PvLdtRules, AnEmptyLdtIgnoresItsAddress) {
  Ldt ldt{0x1000, 4};
  EXPECT_EQ(ldt_rules::set_ldt(ldt, 0xffff800000000123ull, 0), 0);  // Linux's load_mm_ldt at boot
  EXPECT_EQ(ldt, (Ldt{0, 0}));
}

TEST(PvLdtRules, BadArgumentsAreEinvalAndChangeNothing) {
  const Ldt before{0x2000, 16};
  Ldt ldt = before;
  EXPECT_EQ(ldt_rules::set_ldt(ldt, 0x3000, 8193), -XEN_EINVAL);              // more than 64 KiB
  EXPECT_EQ(ldt_rules::set_ldt(ldt, 0x3008, 1), -XEN_EINVAL);                 // not page-aligned
  EXPECT_EQ(ldt_rules::set_ldt(ldt, 0xffff800000000000ull, 1), -XEN_EINVAL);  // the hypervisor's range
  EXPECT_EQ(ldt_rules::set_ldt(ldt, 0xffff87fffffff000ull, 1), -XEN_EINVAL);  // its last page
  EXPECT_EQ(ldt_rules::set_ldt(ldt, 0x0000800000000000ull, 1), -XEN_EINVAL);  // non-canonical
  EXPECT_EQ(ldt_rules::set_ldt(ldt, 0, 0xffffffffu), -XEN_EINVAL);
  EXPECT_EQ(ldt, before);
  EXPECT_EQ(ldt_rules::set_ldt(ldt, 0xffff880000000000ull, 1), 0);  // just above it: the guest's
}
}  // namespace
