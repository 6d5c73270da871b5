#include "pv/rules/cpuid_policy.h"
#include "pv/rules/pv_featuremask.h"

namespace cpuid_policy {
namespace {
// The featureset words (cpufeatureset.h's numbering) of the leaves they come from.
enum Word : unsigned {
  w1d = 0,
  w1c = 1,
  we1d = 2,
  we1c = 3,
  wd1a = 4,
  w7b0 = 5,
  w7c0 = 6,
  we7d = 7,
  we8b = 8,
  w7d0 = 9,
  w7a1 = 10,
  we21a = 11,
  w7b1 = 12,
  w7d2 = 13,
  w7c1 = 14,
  w7d1 = 15,
};
constexpr uint32_t mask(Word word) { return kPvDefaultFeatureMask[word]; }
constexpr uint32_t bit(unsigned n) { return 1u << n; }

// Leaf 1 and its feature bits Xen treats specially.
constexpr uint32_t ecx_eist = bit(7), ecx_xsave = bit(26), ecx_osxsave = bit(27), ecx_hypervisor = bit(31);
constexpr uint32_t edx_mtrr = bit(12), edx_htt = bit(28);
// The leaf 1 EDX features AMD repeats in 0x80000001 EDX (Xen's CPUID_COMMON_1D_FEATURES):
// FPU..APIC (0-9), MTRR..PSE36 (12-17), MMX and FXSR (23, 24).
constexpr uint32_t common_1d_features = 0x3ffu | (0x3fu << 12) | bit(23) | bit(24);
constexpr uint32_t cr4_pke = bit(22);
constexpr uint32_t ecx7_ospke = bit(4);
constexpr uint32_t edx_e1_rdtscp = bit(27);

constexpr uint32_t basic_max = 0xd;                  // CPUID_GUEST_NR_BASIC - 1
constexpr uint32_t extended_max_intel = 0x80000008;  // CPUID_GUEST_NR_EXTD_INTEL - 1
constexpr uint32_t extended_max_amd = 0x80000021;    // CPUID_GUEST_NR_EXTD_AMD - 1
constexpr uint32_t feature_subleaf_max = 2;          // CPUID_GUEST_NR_FEAT - 1
constexpr uint32_t cache_subleaves = 6, xstate_subleaves = 63;

enum class Vendor { intel, amd, other };

Vendor vendor_of(const Leaf& leaf0) {
  if (leaf0.b == 0x756e6547 && leaf0.d == 0x49656e69 && leaf0.c == 0x6c65746e) return Vendor::intel;  // GenuineIntel
  if ((leaf0.b == 0x68747541 && leaf0.d == 0x69746e65 && leaf0.c == 0x444d4163) ||                    // AuthenticAMD
      (leaf0.b == 0x6f677948 && leaf0.d == 0x6e65476e && leaf0.c == 0x656e6975))                      // HygonGenuine
    return Vendor::amd;
  return Vendor::other;
}

uint32_t min(uint32_t a, uint32_t b) { return a < b ? a : b; }

// Xen's flsl: the 1-based position of the highest set bit, 0 for none.
unsigned highest_bit(uint64_t value) {
  unsigned position = 0;
  while (value) {
    ++position;
    value >>= 1;
  }
  return position;
}

class View {
 public:
  View(const Host& host, const Asker& asker) : host_(host), asker_(asker) {
    leaf0_ = raw(0, 0);
    vendor_ = vendor_of(leaf0_);
    max_basic_ = min(leaf0_.a, basic_max);
    const uint32_t host_extended = raw(0x80000000, 0).a;
    const uint32_t cap = vendor_ == Vendor::amd ? extended_max_amd : extended_max_intel;
    max_extended_ = (host_extended & 0xffff0000u) == 0x80000000u ? min(host_extended, cap) : 0;
  }

  Leaf answer(uint32_t leaf, uint32_t subleaf) const {
    if (leaf <= basic_max) return leaf <= max_basic_ ? basic(leaf, subleaf) : Leaf{};
    if (leaf >= kHypervisorBase && leaf <= kHypervisorBase + 0x1ff) return hypervisor(leaf - kHypervisorBase, subleaf);
    if (leaf >= 0x80000000 && leaf <= extended_max_amd) return leaf <= max_extended_ ? extended(leaf) : Leaf{};
    return {};
  }

 private:
  Leaf raw(uint32_t leaf, uint32_t subleaf) const { return host_.query(host_.cookie, leaf, subleaf); }
  bool intel() const { return vendor_ == Vendor::intel; }
  bool amd() const { return vendor_ == Vendor::amd; }
  bool policy_xsave() const { return raw(1, 0).c & mask(w1c) & ecx_xsave; }
  // The dom0 leaks Xen keeps for the hardware domain's kernel (guest_cpuid's second pass).
  bool hardware_kernel() const { return asker_.hardware_domain && asker_.kernel_mode; }

  Leaf leaf1() const {
    const Leaf host = raw(1, 0);
    Leaf leaf;
    leaf.a = host.a & 0x0fff0fffu;  // processor type clobbered
    leaf.b = host.b & 0x00ffffffu;  // APIC id 0: dynamic, and a PV vCPU has no APIC
    leaf.c = (host.c & mask(w1c) & ~ecx_osxsave) | ecx_hypervisor;
    leaf.d = (host.d & mask(w1d) & ~edx_htt) | (host.d & edx_htt);
    // OSXSAVE: Xen's non-architectural leak to a kernel's forced-emulation CPUID.
    const bool guest_osxsave = asker_.guest_cr4 & bit(18);
    if (guest_osxsave || (policy_xsave() && asker_.forced_emulation && asker_.kernel_mode && host_.cr4_osxsave))
      leaf.c |= ecx_osxsave;
    if (hardware_kernel()) {
      leaf.c |= host.c & ecx_eist;
      leaf.d |= host.d & edx_mtrr;
    }
    return leaf;
  }

  Leaf leaf7(uint32_t subleaf) const {
    const uint32_t max_subleaf = min(raw(7, 0).a, feature_subleaf_max);
    if (subleaf > max_subleaf) return {};
    const Leaf host = raw(7, subleaf);
    Leaf leaf;
    switch (subleaf) {
      case 0:
        leaf = Leaf{max_subleaf, host.b & mask(w7b0), host.c & mask(w7c0), host.d & mask(w7d0)};
        if (asker_.guest_cr4 & cr4_pke) leaf.c |= ecx7_ospke;
        return leaf;
      case 1: return Leaf{host.a & mask(w7a1), host.b & mask(w7b1), host.c & mask(w7c1), host.d & mask(w7d1)};
      default: return Leaf{0, 0, 0, host.d & mask(w7d2)};
    }
  }

  Leaf xstate(uint32_t subleaf) const {
    if (!policy_xsave() || subleaf >= xstate_subleaves) return {};
    Leaf leaf = raw(0xd, subleaf);
    if (subleaf == 1) leaf.a &= mask(wd1a);
    return leaf;
  }

  Leaf basic(uint32_t leaf, uint32_t subleaf) const {
    switch (leaf) {
      case 0: return Leaf{max_basic_, leaf0_.b, leaf0_.c, leaf0_.d};
      case 1: return leaf1();
      case 2: {
        if (!intel()) return {};
        Leaf descriptors = raw(2, 0);
        descriptors.a = (descriptors.a & ~0xffu) | 1;  // one query is enough
        return descriptors;
      }
      case 4: return intel() && subleaf < cache_subleaves ? raw(4, subleaf) : Leaf{};
      case 7: return leaf7(subleaf);
      case 0xd: return xstate(subleaf);
      default: return {};  // 3 (PSN), 5 (MONITOR), 6 (thermal), 8, 9 (DCA), 0xa (no vPMU), 0xb (topology), 0xc
    }
  }

  Leaf extended(uint32_t leaf) const {
    const Leaf host = raw(leaf, 0);
    switch (leaf - 0x80000000) {
      case 0: return intel() ? Leaf{max_extended_, 0, 0, 0} : Leaf{max_extended_, leaf0_.b, leaf0_.c, leaf0_.d};
      case 1: {
        Leaf features{0, 0, host.c & mask(we1c), host.d & mask(we1d) & ~common_1d_features};
        if (amd()) {
          features.a = raw(1, 0).a & 0x0fff0fffu;
          features.b = host.b & 0xff00ffffu;
          features.d |= raw(1, 0).d & mask(w1d) & common_1d_features;
        }
        return features;
      }
      case 2:
      case 3:
      case 4: return host;  // the brand string
      case 5: return intel() ? Leaf{} : host;
      case 6: return intel() ? Leaf{0, 0, host.c, 0} : host;
      case 7: return Leaf{0, 0, 0, host.d & mask(we7d)};
      case 8: return Leaf{host.a & 0xffffu, host.b & mask(we8b), amd() ? host.c & 0x0003f0ffu : 0, 0};
      case 0x21: return Leaf{host.a & mask(we21a), 0, 0, 0};
      default:
        if (!amd()) return {};
        if (leaf - 0x80000000 == 0xa || leaf - 0x80000000 == 9 ||
            (leaf - 0x80000000 >= 0xb && leaf - 0x80000000 <= 0x18) || leaf - 0x80000000 >= 0x1b)
          return {};  // SVM (none for PV), and Xen's hidden AMD leaves
        return host;  // 0x19, 0x1a: TLB details and performance hints pass through
    }
  }

  Leaf hypervisor(uint32_t index, uint32_t subleaf) const {
    if (index > kHypervisorLeaves) return {};
    switch (index) {
      case 0: return Leaf{kHypervisorBase + kHypervisorLeaves, 0x566e6558, 0x65584d4d, 0x4d4d566e};  // "XenVMMXenVMM"
      case 1: return Leaf{(kXenMajor << 16) | kXenMinor, 0, 0, 0};
      case 2: return Leaf{1, kHypervisorBase, 1 /* XEN_CPUID_FEAT1_MMU_PT_UPDATE_PRESERVE_AD */, 0};
      case 3: return time_leaf(subleaf);
      case 4: return {};  // HVM only
      default: return subleaf == 0 ? Leaf{0, highest_bit(host_.highest_mfn) + 12, 0, 0} : Leaf{};
    }
  }

  // Xen's time leaf for a domain in the default TSC mode on a machine whose TSC is safe (one
  // CPU): native TSC, no offset, the hypervisor's own scale.
  Leaf time_leaf(uint32_t subleaf) const {
    switch (subleaf) {
      case 0: {
        const bool rdtscp = raw(0x80000001, 0).d & edx_e1_rdtscp && max_extended_ >= 0x80000001;
        return Leaf{bit(1) | (rdtscp ? bit(2) : 0), 0, host_.tsc_khz, 0};
      }
      case 1: return Leaf{0, 0, host_.tsc_to_ns_mul, uint32_t(int32_t(host_.tsc_to_ns_shift))};
      case 2: return Leaf{host_.tsc_khz, 0, 0, 0};
      default: return {};
    }
  }

  const Host& host_;
  const Asker& asker_;
  Leaf leaf0_;
  Vendor vendor_ = Vendor::other;
  uint32_t max_basic_ = 0, max_extended_ = 0;
};
}  // namespace

Leaf guest_cpuid(const Host& host, const Asker& asker, uint32_t leaf, uint32_t subleaf) {
  if (host.query == nullptr) return {};
  return View(host, asker).answer(leaf, subleaf);
}

}  // namespace cpuid_policy
