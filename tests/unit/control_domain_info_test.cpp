#include "control/domain_info.h"

#include <gtest/gtest.h>

#include <cstring>

#include <xen/sched.h>

namespace {
using control::DomainFacts;
using control::DomainIds;
using control::fill_domain_info;
using control::VcpuFacts;

xen_domctl_getdomaininfo fill(const DomainFacts& facts) {
  xen_domctl_getdomaininfo info;
  std::memset(&info, 0xa5, sizeof(info));  // every field must be written
  fill_domain_info(facts, info);
  return info;
}

DomainFacts one_vcpu(const VcpuFacts& vcpu) {
  static VcpuFacts storage;
  storage = vcpu;
  DomainFacts facts;
  facts.id = 3;
  facts.vcpus = &storage;
  facts.vcpu_count = 1;
  return facts;
}

constexpr uint32_t never_shut_down = 0xffffu << XEN_DOMINF_shutdownshift;

TEST(DomainInfo, RunningDomainAsXen) {
  VcpuFacts vcpu;
  vcpu.running = true;
  vcpu.running_ns = 12345;
  DomainFacts facts = one_vcpu(vcpu);
  facts.tot_pages = 16384;
  facts.max_pages = 0xffffffff;
  facts.shared_info_frame = 0x1234;
  facts.cpupool = 0;
  facts.gpaddr_bits = 40;
  xen_domctl_getdomaininfo info = fill(facts);
  EXPECT_EQ(info.domain, 3);
  // The never-set shutdown code (~0u) is shifted into the flags unmasked, as Xen 4.17 does.
  EXPECT_EQ(info.flags, XEN_DOMINF_running | never_shut_down);
  EXPECT_EQ(info.tot_pages, 16384u);
  EXPECT_EQ(info.max_pages, 0xffffffffu);
  EXPECT_EQ(info.shared_info_frame, 0x1234u);
  EXPECT_EQ(info.cpu_time, 12345u);
  EXPECT_EQ(info.nr_online_vcpus, 1u);
  EXPECT_EQ(info.max_vcpu_id, 0u);
  EXPECT_EQ(info.ssidref, 0u);
  EXPECT_EQ(info.outstanding_pages, 0u);
  EXPECT_EQ(info.shr_pages, 0u);
  EXPECT_EQ(info.paged_pages, 0u);
  EXPECT_EQ(info.gpaddr_bits, 40);
  for (uint8_t byte : info.handle) EXPECT_EQ(byte, 0);
  EXPECT_EQ(info.pad1, 0);
  EXPECT_EQ(info.arch_config.emulation_flags, 0u);
}

TEST(DomainInfo, BlockedOnlyWhenEveryOnlineVcpuIs) {
  VcpuFacts vcpus[3];
  for (unsigned i = 0; i < 3; ++i) vcpus[i].id = i;
  vcpus[0].blocked = vcpus[1].blocked = true;
  vcpus[2].online = false;  // an offline vCPU does not count
  DomainFacts facts;
  facts.vcpus = vcpus;
  facts.vcpu_count = 3;
  xen_domctl_getdomaininfo info = fill(facts);
  EXPECT_EQ(info.flags, XEN_DOMINF_blocked | never_shut_down);
  EXPECT_EQ(info.nr_online_vcpus, 2u);
  EXPECT_EQ(info.max_vcpu_id, 2u) << "the highest vCPU id, online or not";
  vcpus[1].blocked = false;
  EXPECT_EQ(fill(facts).flags, never_shut_down) << "one runnable vCPU: neither blocked nor running";
}

TEST(DomainInfo, NoOnlineVcpuMeansNoRunStateFlags) {
  VcpuFacts vcpu;
  vcpu.online = false;
  vcpu.blocked = true;
  xen_domctl_getdomaininfo info = fill(one_vcpu(vcpu));
  EXPECT_EQ(info.flags, never_shut_down);
  EXPECT_EQ(info.nr_online_vcpus, 0u);
}

TEST(DomainInfo, NoVcpusAtAll) {
  DomainFacts facts;
  xen_domctl_getdomaininfo info = fill(facts);
  EXPECT_EQ(info.max_vcpu_id, XEN_INVALID_MAX_VCPU_ID);
  EXPECT_EQ(info.flags, never_shut_down);
}

TEST(DomainInfo, ShutdownCodeAndState) {
  VcpuFacts vcpu;
  DomainFacts facts = one_vcpu(vcpu);
  facts.shut_down = true;
  facts.shutdown_code = SHUTDOWN_crash;
  EXPECT_EQ(fill(facts).flags, XEN_DOMINF_shutdown | (SHUTDOWN_crash << XEN_DOMINF_shutdownshift));
  facts.shutdown_code = SHUTDOWN_poweroff;
  EXPECT_EQ(fill(facts).flags, XEN_DOMINF_shutdown);
}

TEST(DomainInfo, PausedDyingAndHvm) {
  VcpuFacts vcpu;
  vcpu.blocked = true;
  DomainFacts facts = one_vcpu(vcpu);
  facts.paused_by_controller = true;
  EXPECT_EQ(fill(facts).flags, XEN_DOMINF_paused | XEN_DOMINF_blocked | never_shut_down);
  facts.paused_by_controller = false;
  facts.dead = true;
  EXPECT_EQ(fill(facts).flags, XEN_DOMINF_dying | XEN_DOMINF_blocked | never_shut_down);
  facts.dead = false;
  facts.hvm = true;
  EXPECT_EQ(fill(facts).flags, XEN_DOMINF_hvm_guest | XEN_DOMINF_blocked | never_shut_down);
}

TEST(DomainInfo, HandleAndIdentity) {
  uint8_t handle[16];
  for (unsigned i = 0; i < 16; ++i) handle[i] = uint8_t(0xf0 + i);
  VcpuFacts vcpu;
  DomainFacts facts = one_vcpu(vcpu);
  facts.handle = handle;
  facts.ssidref = 7;
  facts.cpupool = 2;
  xen_domctl_getdomaininfo info = fill(facts);
  EXPECT_EQ(std::memcmp(info.handle, handle, 16), 0);
  EXPECT_EQ(info.ssidref, 7u);
  EXPECT_EQ(info.cpupool, 2u);
}

TEST(DomainInfo, CpuTimeSumsEveryVcpu) {
  VcpuFacts vcpus[2];
  vcpus[0].running_ns = 100;
  vcpus[1].id = 1;
  vcpus[1].running_ns = 23;
  DomainFacts facts;
  facts.vcpus = vcpus;
  facts.vcpu_count = 2;
  EXPECT_EQ(fill(facts).cpu_time, 123u);
}

const domid_t kIds[] = {0, 1, 4};
const DomainIds kDomains{kIds, 3};

TEST(DomainSearch, FirstAtOrAfter) {
  EXPECT_EQ(control::first_at_or_after(kDomains, 0), 0);
  EXPECT_EQ(control::first_at_or_after(kDomains, 1), 1);
  EXPECT_EQ(control::first_at_or_after(kDomains, 2), 2);
  EXPECT_EQ(control::first_at_or_after(kDomains, 4), 2);
  EXPECT_EQ(control::first_at_or_after(kDomains, 5), control::no_domain);
  EXPECT_EQ(control::first_at_or_after(DomainIds{}, 0), control::no_domain);
}

TEST(DomainSearch, GetdomaininfoExactOrNextUp) {
  control::Selection exact = control::select_for_getdomaininfo(kDomains, 1);
  EXPECT_EQ(exact.error, 0);
  EXPECT_EQ(exact.index, 1);
  control::Selection next = control::select_for_getdomaininfo(kDomains, 2);
  EXPECT_EQ(next.error, 0);
  EXPECT_EQ(next.index, 2) << "domain 2 does not exist: 4.17 reports the next one, domain 4";
}

TEST(DomainSearch, GetdomaininfoNothingAtOrAbove) {
  EXPECT_EQ(control::select_for_getdomaininfo(kDomains, 5).error, -XEN_ESRCH);
  EXPECT_EQ(control::select_for_getdomaininfo(kDomains, DOMID_FIRST_RESERVED - 1).error, -XEN_ESRCH);
}

TEST(DomainSearch, GetdomaininfoReservedIdsAreEinval) {
  for (uint32_t id : {uint32_t(DOMID_FIRST_RESERVED), uint32_t(DOMID_SELF), uint32_t(DOMID_IO), uint32_t(DOMID_XEN),
                      uint32_t(DOMID_IDLE), uint32_t(DOMID_INVALID)})
    EXPECT_EQ(control::select_for_getdomaininfo(kDomains, id).error, -XEN_EINVAL) << id;
}
}  // namespace
