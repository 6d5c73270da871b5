#include "control/physinfo.h"

#include <gtest/gtest.h>

#include <cstring>

namespace {
using control::MachineFacts;

TEST(Physinfo, OneCpuMachine) {
  MachineFacts facts;
  facts.cpu_khz = 2'400'000;
  facts.total_pages = 131040;
  facts.free_pages = 90000;
  facts.max_mfn = 0x1ffff;
  facts.hw_cap[0] = 0x078bfbff;
  xen_sysctl_physinfo info;
  std::memset(&info, 0xa5, sizeof(info));
  control::fill_physinfo(facts, info);
  EXPECT_EQ(info.threads_per_core, 1u);
  EXPECT_EQ(info.cores_per_socket, 1u);
  EXPECT_EQ(info.nr_cpus, 1u);
  EXPECT_EQ(info.max_cpu_id, 0u);
  EXPECT_EQ(info.nr_nodes, 1u);
  EXPECT_EQ(info.max_node_id, 0u);
  EXPECT_EQ(info.cpu_khz, 2'400'000u);
  EXPECT_EQ(info.capabilities, XEN_SYSCTL_PHYSCAP_pv);
  EXPECT_EQ(info.arch_capabilities, 0u);
  EXPECT_EQ(info.pad, 0u);
  EXPECT_EQ(info.total_pages, 131040u);
  EXPECT_EQ(info.free_pages, 90000u);
  EXPECT_EQ(info.scrub_pages, 0u);
  EXPECT_EQ(info.outstanding_pages, 0u);
  EXPECT_EQ(info.max_mfn, 0x1ffffu);
  EXPECT_EQ(info.hw_cap[0], 0x078bfbffu);
  EXPECT_EQ(info.hw_cap[7], 0u);
}

TEST(Physinfo, Capabilities) {
  MachineFacts facts;
  facts.hvm = facts.hap = facts.shadow = true;
  xen_sysctl_physinfo info;
  control::fill_physinfo(facts, info);
  EXPECT_EQ(info.capabilities,
            XEN_SYSCTL_PHYSCAP_pv | XEN_SYSCTL_PHYSCAP_hvm | XEN_SYSCTL_PHYSCAP_hap | XEN_SYSCTL_PHYSCAP_shadow);
}

TEST(Physinfo, GuestPhysicalAddressBits) {
  using control::guest_physical_address_bits;
  EXPECT_EQ(guest_physical_address_bits(0x80000004, 0), 36) << "no leaf 0x80000008";
  EXPECT_EQ(guest_physical_address_bits(0x80000008, 0x00003028), 40) << "physical width when no guest width";
  EXPECT_EQ(guest_physical_address_bits(0x80000008, 0x00303028), 48) << "the guest width when given";
  EXPECT_EQ(guest_physical_address_bits(0x80000008, 0x00003040), 52) << "capped at 52 (Xen's PADDR_BITS)";
}
}  // namespace
