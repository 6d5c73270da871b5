#include "control/create_config.h"

#include <gtest/gtest.h>

namespace {
using control::check_create_config;
using control::DomainConfig;

// What xl and libxl give a PV domain with one vCPU.
xen_domctl_createdomain pv_config() {
  xen_domctl_createdomain config{};
  config.max_vcpus = 1;
  config.max_evtchn_port = 1023;
  config.max_grant_frames = 32;
  config.max_maptrack_frames = 1024;
  config.grant_opts = XEN_DOMCTL_GRANT_version(1);
  return config;
}

long check(const xen_domctl_createdomain& config) {
  DomainConfig out;
  return check_create_config(config, false, out);
}

TEST(CreateConfig, APvDomainIsAccepted) {
  DomainConfig out;
  ASSERT_EQ(check_create_config(pv_config(), false, out), 0);
  EXPECT_EQ(out.max_vcpus, 1u);
  EXPECT_EQ(out.flags & XEN_DOMCTL_CDF_oos_off, XEN_DOMCTL_CDF_oos_off) << "Xen sets oos_off for PV";
  EXPECT_EQ(out.max_grant_frames, 32);
  EXPECT_EQ(out.emulation_flags, 0u);
}

TEST(CreateConfig, NegativeGrantLimitsTakeTheDefaults) {
  xen_domctl_createdomain config = pv_config();
  config.max_grant_frames = -1;
  config.max_maptrack_frames = -1;
  DomainConfig out;
  ASSERT_EQ(check_create_config(config, false, out), 0);
  EXPECT_EQ(out.max_grant_frames, control::max_grant_frames_default);
  EXPECT_EQ(out.max_maptrack_frames, control::max_maptrack_frames_default);
}

TEST(CreateConfig, HvmAndHapAreRefused) {
  for (uint32_t flags :
       {XEN_DOMCTL_CDF_hvm, XEN_DOMCTL_CDF_hap, XEN_DOMCTL_CDF_hvm | XEN_DOMCTL_CDF_hap, XEN_DOMCTL_CDF_nested_virt,
        XEN_DOMCTL_CDF_iommu, XEN_DOMCTL_CDF_vpmu, XEN_DOMCTL_CDF_s3_integrity, 1u << 8, 0x80000000u}) {
    xen_domctl_createdomain config = pv_config();
    config.flags = flags;
    EXPECT_EQ(check(config), -XEN_EINVAL) << std::hex << flags;
  }
  xen_domctl_createdomain config = pv_config();
  config.flags = XEN_DOMCTL_CDF_oos_off | XEN_DOMCTL_CDF_xs_domain;
  DomainConfig out;
  EXPECT_EQ(check_create_config(config, false, out), 0);
  EXPECT_TRUE(out.xenstore_domain);
}

TEST(CreateConfig, VcpusOneToEight) {
  xen_domctl_createdomain config = pv_config();
  config.max_vcpus = 0;
  EXPECT_EQ(check(config), -XEN_EINVAL) << "no vCPUs";
  DomainConfig out;
  for (uint32_t count : {1u, 2u, 4u, 8u}) {
    config.max_vcpus = count;
    EXPECT_EQ(check_create_config(config, false, out), 0) << count;
    EXPECT_EQ(out.max_vcpus, count);
  }
  config.max_vcpus = control::max_vcpus_per_domain + 1;
  EXPECT_EQ(check(config), -XEN_EINVAL) << "ours: at most 8 vCPUs per domain";
  config.max_vcpus = 0xffffffff;
  EXPECT_EQ(check(config), -XEN_EINVAL);
}

TEST(CreateConfig, OptionsWithoutTheirFeature) {
  xen_domctl_createdomain config = pv_config();
  config.iommu_opts = XEN_DOMCTL_IOMMU_no_sharept;
  EXPECT_EQ(check(config), -XEN_EINVAL);
  config = pv_config();
  config.vmtrace_size = 4096;
  EXPECT_EQ(check(config), -XEN_EINVAL);
  config = pv_config();
  config.arch.misc_flags = 2;
  EXPECT_EQ(check(config), -XEN_EINVAL);
  config.arch.misc_flags = XEN_X86_MSR_RELAXED;
  EXPECT_EQ(check(config), 0);
}

TEST(CreateConfig, EmulationFlagsOfAPvDomain) {
  xen_domctl_createdomain config = pv_config();
  config.arch.emulation_flags = XEN_X86_EMU_PIT;
  EXPECT_EQ(check(config), 0) << "PV may have the PIT";
  config.arch.emulation_flags = XEN_X86_EMU_LAPIC;
  EXPECT_EQ(check(config), -XEN_EOPNOTSUPP) << "known, but not for PV";
  config.arch.emulation_flags = 1u << 20;
  EXPECT_EQ(check(config), -XEN_EINVAL) << "unknown";
  DomainConfig out;
  ASSERT_EQ(check_create_config(pv_config(), true, out), 0);
  EXPECT_EQ(out.emulation_flags, uint32_t(XEN_X86_EMU_PIT)) << "the hardware domain gets the PIT";
}

TEST(CreateConfig, GrantTableLimits) {
  xen_domctl_createdomain config = pv_config();
  config.grant_opts = 0;
  EXPECT_EQ(check(config), -XEN_EINVAL) << "grant version 0";
  config.grant_opts = 3;
  EXPECT_EQ(check(config), -XEN_EINVAL) << "above the version Xen supports";
  config.grant_opts = 0x10 | 1;
  EXPECT_EQ(check(config), -XEN_EINVAL) << "unknown grant option bits";
  config = pv_config();
  config.max_grant_frames = 0;
  EXPECT_EQ(check(config), -XEN_EINVAL);
  config.max_grant_frames = 65;
  EXPECT_EQ(check(config), -XEN_EINVAL);
  config = pv_config();
  config.max_maptrack_frames = 1025;
  EXPECT_EQ(check(config), -XEN_EINVAL);
  config.max_maptrack_frames = 0;
  EXPECT_EQ(check(config), 0) << "no maptrack is fine";
}

TEST(CreateConfig, OnlyPoolZero) {
  xen_domctl_createdomain config = pv_config();
  config.cpupool_id = 1;
  EXPECT_EQ(check(config), -XEN_ESRCH);
}

TEST(CreateConfig, EventChannelLimitIsKeptToIntMax) {
  xen_domctl_createdomain config = pv_config();
  config.max_evtchn_port = 0xffffffff;
  DomainConfig out;
  ASSERT_EQ(check_create_config(config, false, out), 0);
  EXPECT_EQ(out.max_evtchn_port, 0x7fffffffu);
}
}  // namespace
