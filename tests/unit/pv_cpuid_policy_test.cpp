// Xen 4.17's PV CPUID policy (pv/rules/cpuid_policy) on a fake host, and the forced-emulation
// prefix (pv/rules/forced_emulation), including bytes that run into an unreadable page.
#include "pv/rules/cpuid_policy.h"
#include "pv/rules/forced_emulation.h"

#include <gtest/gtest.h>

#include <map>
#include <utility>

#include "pv/rules/pv_featuremask.h"

namespace {
using cpuid_policy::Asker;
using cpuid_policy::Host;
using cpuid_policy::Leaf;

// A Westmere-like Intel host (QEMU's -cpu Westmere), with a few bits a PV guest must not see.
struct FakeCpu {
  std::map<std::pair<uint32_t, uint32_t>, Leaf> leaves;
  FakeCpu() {
    leaves[{0, 0}] = Leaf{0xb, 0x756e6547, 0x6c65746e, 0x49656e69};  // GenuineIntel, max basic 0xb
    // family 6 model 44 with processor type 2 set; APIC id 5; ecx: SSE3, MONITOR, VMX, EIST,
    // X2APIC, POPCNT, AES, HYPERVISOR; edx: FPU, VME, PSE, TSC, MSR, PAE, APIC, MTRR, PGE, HTT.
    leaves[{1, 0}] =
        Leaf{0x000226c2, 0x05010800, 0x00000001 | 1u << 3 | 1u << 5 | 1u << 7 | 1u << 21 | 1u << 23 | 1u << 25,
             0x1 | 0x2 | 0x8 | 0x10 | 0x20 | 0x40 | 0x200 | 0x1000 | 0x2000 | 1u << 28};
    leaves[{2, 0}] = Leaf{0x00000001, 0, 0, 0x2c307d};
    leaves[{4, 0}] = Leaf{0x121, 0x1c0003f, 0x3f, 0};
    leaves[{5, 0}] = Leaf{0x40, 0x40, 3, 0x1120};
    leaves[{7, 0}] = Leaf{0, 0, 0, 0};
    leaves[{0xb, 0}] = Leaf{0, 1, 0x100, 5};
    leaves[{0x80000000, 0}] = Leaf{0x80000008, 0, 0, 0};
    leaves[{0x80000001, 0}] = Leaf{0, 0, 0x1, 0x28100800};  // LAHF; SYSCALL, NX, RDTSCP, LM
    leaves[{0x80000002, 0}] = Leaf{0x65746e49, 0x2952286c, 0x6f655820, 0x2952286e};
    leaves[{0x80000007, 0}] = Leaf{1, 2, 3, 0x100};  // invariant TSC
    leaves[{0x80000008, 0}] = Leaf{0x00003028, 0, 0x11, 0x22};
  }
  static Leaf query(const void* cookie, uint32_t leaf, uint32_t subleaf) {
    const auto& cpu = *static_cast<const FakeCpu*>(cookie);
    auto found = cpu.leaves.find({leaf, (leaf == 4 || leaf == 7 || leaf == 0xb || leaf == 0xd) ? subleaf : 0});
    return found == cpu.leaves.end() ? Leaf{} : found->second;
  }
};

class CpuidPolicy : public ::testing::Test {
 protected:
  CpuidPolicy() {
    host_.query = FakeCpu::query;
    host_.cookie = &cpu_;
    host_.highest_mfn = 0x3ffdf;  // a 1 GiB machine
    host_.tsc_khz = 2999830;
    host_.tsc_to_ns_mul = 0xaaaaaaaa;
    host_.tsc_to_ns_shift = -1;
  }
  Leaf ask(uint32_t leaf, uint32_t subleaf = 0) { return cpuid_policy::guest_cpuid(host_, asker_, leaf, subleaf); }

  FakeCpu cpu_;
  Host host_;
  Asker asker_;
};

TEST_F(CpuidPolicy, HypervisorLeavesAreXen417s) {
  EXPECT_EQ(ask(0x40000000), (Leaf{0x40000005, 0x566e6558, 0x65584d4d, 0x4d4d566e})) << "XenVMMXenVMM, 5 leaves";
  EXPECT_EQ(ask(0x40000001), (Leaf{0x00040011, 0, 0, 0})) << "4.17";
  EXPECT_EQ(ask(0x40000002), (Leaf{1, 0x40000000, 1, 0})) << "one hypercall page at MSR 0x40000000, PRESERVE_AD";
  EXPECT_EQ(ask(0x40000003, 0), (Leaf{0x2 | 0x4, 0, 2999830, 0})) << "safe TSC, RDTSCP, native mode";
  EXPECT_EQ(ask(0x40000003, 1), (Leaf{0, 0, 0xaaaaaaaa, 0xffffffff}));
  EXPECT_EQ(ask(0x40000003, 2), (Leaf{2999830, 0, 0, 0}));
  EXPECT_EQ(ask(0x40000004), Leaf{}) << "the HVM leaf is empty for PV";
  EXPECT_EQ(ask(0x40000005), (Leaf{0, 18 + 12, 0, 0})) << "machine addresses of 30 bits";
  EXPECT_EQ(ask(0x40000005, 1), Leaf{});
}

TEST_F(CpuidPolicy, BadLeavesAreZero) {
  for (uint32_t leaf : {0x40000006u, 0x400000ffu, 0x40000100u, 0x400001ffu, 0x4fffffffu, 0xcu, 0xdu, 0x7fffffffu,
                        0x80000009u, 0x80000021u, 0xc0000000u, 0xffffffffu})
    EXPECT_EQ(ask(leaf), Leaf{}) << std::hex << leaf;
  EXPECT_EQ(ask(7, 1), Leaf{}) << "beyond the host's max subleaf";
  EXPECT_EQ(ask(4, 6), Leaf{}) << "beyond Xen's cache subleaves";
}

TEST_F(CpuidPolicy, BasicLeavesFollowXensDefaultPvPolicy) {
  EXPECT_EQ(ask(0), (Leaf{0xb, 0x756e6547, 0x6c65746e, 0x49656e69}));
  const Leaf leaf1 = ask(1);
  EXPECT_EQ(leaf1.a, 0x000206c2u) << "processor type clobbered";
  EXPECT_EQ(leaf1.b >> 24, 0u) << "APIC id 0";
  EXPECT_EQ(leaf1.b & 0xffffff, 0x010800u);
  EXPECT_TRUE(leaf1.c & 1u << 31) << "HYPERVISOR forced on";
  EXPECT_FALSE(leaf1.c & (1u << 3 | 1u << 5 | 1u << 7 | 1u << 21)) << "no MONITOR, VMX, EIST, X2APIC";
  EXPECT_TRUE(leaf1.c & 1u << 23 && leaf1.c & 1u << 25 && leaf1.c & 1) << "POPCNT, AES, SSE3 pass";
  EXPECT_FALSE(leaf1.d & (0x2 | 0x8 | 0x1000 | 0x2000)) << "no VME, PSE, MTRR, PGE";
  EXPECT_TRUE(leaf1.d & 0x200 && leaf1.d & 0x10 && leaf1.d & 1u << 28) << "APIC, TSC, HTT as the host";
  EXPECT_EQ(ask(5), Leaf{}) << "MONITOR leaf hidden";
  EXPECT_EQ(ask(0xb), Leaf{}) << "topology hidden";
  EXPECT_EQ(ask(2).a & 0xff, 1u);
  EXPECT_EQ(ask(4, 0), (Leaf{0x121, 0x1c0003f, 0x3f, 0}));
  EXPECT_EQ(ask(3), Leaf{}) << "PSN";
}

TEST_F(CpuidPolicy, ExtendedLeavesAsIntelsUnderXen) {
  EXPECT_EQ(ask(0x80000000), (Leaf{0x80000008, 0, 0, 0}));
  EXPECT_EQ(ask(0x80000001), (Leaf{0, 0, 1, 0x28100800}));
  EXPECT_EQ(ask(0x80000002), (cpu_.leaves[{0x80000002, 0}])) << "the brand string";
  EXPECT_EQ(ask(0x80000007), Leaf{}) << "invariant TSC is not in the default PV set; the power leaf is cleared";
  EXPECT_EQ(ask(0x80000008), (Leaf{0x3028, 0, 0, 0}));
}

TEST_F(CpuidPolicy, OsxsaveLeaksOnlyToAKernelsForcedCpuidWhenXenUsesXsave) {
  cpu_.leaves[{1, 0}].c |= 1u << 26;  // XSAVE
  cpu_.leaves[{0, 0}].a = 0xd;
  cpu_.leaves[{0xd, 0}] = Leaf{7, 0x340, 0x340, 0};
  EXPECT_FALSE(ask(1).c & 1u << 27) << "the hypervisor has not enabled XSAVE";
  host_.cr4_osxsave = true;
  EXPECT_TRUE(ask(1).c & 1u << 27);
  EXPECT_EQ(ask(0xd, 0), (Leaf{7, 0x340, 0x340, 0}));
  asker_.kernel_mode = false;
  EXPECT_FALSE(ask(1).c & 1u << 27) << "not to user mode";
  asker_.kernel_mode = true;
  asker_.forced_emulation = false;
  EXPECT_FALSE(ask(1).c & 1u << 27) << "not to a faulting CPUID";
}

TEST_F(CpuidPolicy, TheHardwareDomainsKernelSeesEistAndMtrr) {
  asker_.hardware_domain = true;
  EXPECT_TRUE(ask(1).c & 1u << 7);
  EXPECT_TRUE(ask(1).d & 1u << 12);
  asker_.kernel_mode = false;
  EXPECT_FALSE(ask(1).c & 1u << 7);
}

TEST_F(CpuidPolicy, NoHostNoAnswer) {
  Host none;
  EXPECT_EQ(cpuid_policy::guest_cpuid(none, asker_, 0x40000000, 0), Leaf{});
}

TEST(PvFeatureMask, KnownBitsOfXensDefaultPvSet) {
  using cpuid_policy::kPvDefaultFeatureMask;
  EXPECT_TRUE(kPvDefaultFeatureMask[0] & 1u << 0) << "FPU is 'A'";
  EXPECT_FALSE(kPvDefaultFeatureMask[0] & 1u << 1) << "VME is 'S': HVM only";
  EXPECT_FALSE(kPvDefaultFeatureMask[1] & 1u << 5) << "VMX is 'h'";
  EXPECT_TRUE(kPvDefaultFeatureMask[1] & 1u << 31) << "HYPERVISOR is '!A'";
  EXPECT_TRUE(kPvDefaultFeatureMask[2] & 1u << 29) << "LM";
}

namespace fe = forced_emulation;

TEST(ForcedEmulation, ThePrefixBeforeCpuid) {
  const uint8_t bytes[] = {0x0f, 0x0b, 'x', 'e', 'n', 0x0f, 0xa2, 0x90};
  EXPECT_EQ(fe::decide(bytes, sizeof(bytes)).verdict, fe::Verdict::cpuid);
  EXPECT_EQ(fe::decide(bytes, 7).verdict, fe::Verdict::cpuid) << "exactly the instruction is readable";
}

TEST(ForcedEmulation, AnythingElseStaysTheGuestsInvalidOpcode) {
  const uint8_t plain_ud2[] = {0x0f, 0x0b, 0x90, 0x90, 0x90, 0x90, 0x90};
  const uint8_t other_name[] = {0x0f, 0x0b, 'k', 'v', 'm', 0x0f, 0xa2};
  const uint8_t not_cpuid[] = {0x0f, 0x0b, 'x', 'e', 'n', 0x0f, 0x30};  // wrmsr is not emulated this way
  const uint8_t ud1[] = {0x0f, 0xb9, 'x', 'e', 'n', 0x0f, 0xa2};
  for (const uint8_t* bytes : {plain_ud2, other_name, not_cpuid, ud1})
    EXPECT_EQ(fe::decide(bytes, 7).verdict, fe::Verdict::not_forced);
}

// Xen copies the 5 prefix bytes, then the 2 of the instruction: a copy cut short by an
// unreadable page is a #PF at the first byte it could not read, before any comparison.
TEST(ForcedEmulation, BytesRunningIntoAnUnreadablePageAreAPageFaultThere) {
  const uint8_t bytes[] = {0x0f, 0x0b, 'x', 'e', 'n', 0x0f, 0xa2};
  for (size_t readable = 0; readable < fe::kPrefixLength; ++readable) {
    fe::Decision decision = fe::decide(bytes, readable);
    EXPECT_EQ(decision.verdict, fe::Verdict::fault) << readable;
    EXPECT_EQ(decision.fault_offset, readable);
  }
  for (size_t readable = fe::kPrefixLength; readable < fe::kInstructionLength; ++readable) {
    fe::Decision decision = fe::decide(bytes, readable);
    EXPECT_EQ(decision.verdict, fe::Verdict::fault) << readable;
    EXPECT_EQ(decision.fault_offset, readable);
  }
  const uint8_t plain_ud2[] = {0x0f, 0x0b, 0x90, 0x90, 0x90};
  EXPECT_EQ(fe::decide(plain_ud2, 2).verdict, fe::Verdict::fault) << "even a plain ud2 at a page end, as Xen";
  EXPECT_EQ(fe::decide(plain_ud2, 5).verdict, fe::Verdict::not_forced);
}
}  // namespace
