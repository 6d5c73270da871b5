#include <gtest/gtest.h>

#include "hypercall/feature_submap.h"

namespace {
TEST(HypervisorFeatureSubmap, XensBitsForAPvGuest) {
  const features::Submap domu = features::pv_submap(0, false, false);
  ASSERT_TRUE(domu.valid);
  EXPECT_TRUE(domu.bits & (1u << XENFEAT_mmu_pt_update_preserve_ad));  // Linux panics without these
  EXPECT_TRUE(domu.bits & (1u << XENFEAT_gnttab_map_avail_bits));
  EXPECT_FALSE(domu.bits & (1u << XENFEAT_dom0));
  EXPECT_FALSE(domu.bits & (1u << XENFEAT_writable_page_tables));  // only for translated guests
  EXPECT_FALSE(domu.bits & (1u << XENFEAT_auto_translated_physmap));
  EXPECT_EQ(domu.bits, 0x220e0u);  // bits 5, 6, 7, 13, 17 (dom0 on Xen 4.17 reads these plus 11: selftest=hypercall)
  EXPECT_EQ(features::pv_submap(0, true, false).bits, domu.bits | (1u << XENFEAT_dom0));
  EXPECT_EQ(features::pv_submap(0, false, true).bits, domu.bits | (1u << XENFEAT_pae_pgdir_above_4gb));
}

TEST(HypervisorFeatureSubmap, OnlySubmapZeroExists) {
  EXPECT_FALSE(features::pv_submap(1, true, false).valid);
  EXPECT_FALSE(features::pv_submap(0xffffffffu, false, false).valid);
}
}  // namespace
