#include "boot/boot_domains.h"

#include <gtest/gtest.h>

namespace {
using boot::BootDomains;
using boot::plan_boot_domains;

TEST(BootDomains, NoModulesNoDomain) {
  BootDomains plan = plan_boot_domains(0, 8);
  EXPECT_EQ(plan.count, 0u);
  EXPECT_EQ(plan.ignored_modules, 0u);
}

TEST(BootDomains, KernelAloneIsDom0WithoutInitrd) {
  BootDomains plan = plan_boot_domains(1, 8);
  ASSERT_EQ(plan.count, 1u);
  EXPECT_EQ(plan.domains[0].id, 0);
  EXPECT_TRUE(plan.domains[0].privileged);
  EXPECT_EQ(plan.domains[0].kernel_module, 0u);
  EXPECT_FALSE(plan.domains[0].has_initrd);
}

TEST(BootDomains, KernelAndInitrdIsDom0Only) {
  BootDomains plan = plan_boot_domains(2, 8);
  ASSERT_EQ(plan.count, 1u);
  EXPECT_TRUE(plan.domains[0].has_initrd);
  EXPECT_EQ(plan.domains[0].initrd_module, 1u);
}

TEST(BootDomains, PairsAfterDom0AreUnprivilegedDomains) {
  BootDomains plan = plan_boot_domains(5, 8);
  ASSERT_EQ(plan.count, 3u);
  EXPECT_EQ(plan.domains[1].id, 1);
  EXPECT_FALSE(plan.domains[1].privileged);
  EXPECT_EQ(plan.domains[1].kernel_module, 2u);
  EXPECT_TRUE(plan.domains[1].has_initrd);
  EXPECT_EQ(plan.domains[1].initrd_module, 3u);
  EXPECT_EQ(plan.domains[2].id, 2);
  EXPECT_EQ(plan.domains[2].kernel_module, 4u);
  EXPECT_FALSE(plan.domains[2].has_initrd);  // a lone last kernel
}

TEST(BootDomains, DomainsBeyondTheTableAreIgnored) {
  BootDomains plan = plan_boot_domains(7, 2);
  EXPECT_EQ(plan.count, 2u);
  EXPECT_EQ(plan.ignored_modules, 3u);
}

TEST(BootDomains, MaxDomainsIsCappedAtCapacity) {
  const size_t modules = 2 * BootDomains::capacity + 6;
  BootDomains plan = plan_boot_domains(modules, 100);
  EXPECT_EQ(plan.count, BootDomains::capacity);
  EXPECT_EQ(plan.ignored_modules, modules - 2 * BootDomains::capacity);
}
}  // namespace
