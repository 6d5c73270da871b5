// selftest=msr: the MSRs a PV kernel reads and writes with raw rdmsr / wrmsr, as Xen 4.17
// serves them after their #GP (arch/x86/msr.c, pv/emul-priv-op.c, cpu/mcheck/vmce.c): the
// virtual machine-check architecture Linux's mcheck_cpu_init polls (MCG_CAP with Xen's two
// banks, MCG_STATUS, MCG_CTL, the banks' CTL / STATUS / ADDR / MISC / CTL2, the rest of the
// bank ranges reading 0), PAT, EFER, APIC_BASE, MISC_ENABLE, the microcode revision,
// FEATURE_CONTROL, PLATFORM_INFO / MISC_FEATURES_ENABLES, the TSC, the power MSRs Xen answers
// 0; and the hostile half: reserved bits, read-only and refused MSRs stay the guest's #GP(0)
// and leave the value as it was. The same checks run on Xen 4.17.
#include "arch/hostile_probes.h"
#include "selftest/cpu/cpu_selftests.h"

namespace kernel {
namespace {
constexpr long kGeneralProtection0 = 13l << 16;
constexpr uint32_t kMcgCap = 0x179, kMcgStatus = 0x17a, kMcgCtl = 0x17b, kMcgExtCtl = 0x4d0, kMc0Ctl = 0x400,
                   kMc0Ctl2 = 0x280;
constexpr uint32_t kPat = 0x277, kEfer = 0xc0000080, kApicBase = 0x1b, kMiscEnable = 0x1a0, kUcodeRev = 0x8b,
                   kUcodeWrite = 0x79, kFeatureControl = 0x3a, kPlatformInfo = 0xce, kMiscFeatures = 0x140, kTsc = 0x10,
                   kPerfCtl = 0x199, kThermStatus = 0x19c, kSysenterEip = 0x176;

// The value, or (vector << 16 | error code) of the fault: one number for check().
long read(uint32_t msr) {
  uint64_t value = 0;
  const long rc = probe_rdmsr(msr, &value);
  return rc != 0 ? rc : long(value);
}

bool intel() {
  uint32_t words[4] = {};
  return probe_forced_cpuid(0, 0, words) == 0 && words[1] == 0x756e6547;  // "Genu"
}

void machine_check_globals(SelfTest& test) {
  test.check("rdmsr MCG_CAP: Xen's two banks (Intel: and SER_P, TES_P, CMCI_P)", read(kMcgCap),
             intel() ? 0x1000c02 : 2);
  test.check("rdmsr MCG_STATUS is 0", read(kMcgStatus), 0);
  test.check("wrmsr MCG_STATUS (MCIP) works", probe_wrmsr(kMcgStatus, 4), 0);
  test.check("and reads back", read(kMcgStatus), 4);
  test.check("wrmsr MCG_STATUS 0 works", probe_wrmsr(kMcgStatus, 0), 0);
  test.check("rdmsr MCG_CTL is 0 (MCG_CTL_P not offered)", read(kMcgCtl), 0);
  test.check("wrmsr MCG_CTL is ignored", probe_wrmsr(kMcgCtl, ~0ull), 0);
  test.check("  and MCG_CTL stays 0", read(kMcgCtl), 0);
  test.check("wrmsr MCG_CAP (read-only) is ignored", probe_wrmsr(kMcgCap, 0), 0);
  test.check("  and MCG_CAP is unchanged", read(kMcgCap), intel() ? 0x1000c02 : 2);
  test.check("rdmsr MCG_EXT_CTL (no LMCE) is #GP(0)", read(kMcgExtCtl), kGeneralProtection0);
  test.check("wrmsr MCG_EXT_CTL is #GP(0)", probe_wrmsr(kMcgExtCtl, 1), kGeneralProtection0);
}

void machine_check_banks(SelfTest& test) {
  for (uint32_t bank = 0; bank < 2; ++bank) {
    const uint32_t ctl = kMc0Ctl + 4 * bank;
    test.note("bank", bank);
    test.check("rdmsr MCi_CTL is all ones", read(ctl), -1);
    test.check("wrmsr MCi_CTL 0 is ignored", probe_wrmsr(ctl, 0), 0);
    test.check("  and MCi_CTL stays all ones", read(ctl), -1);
    test.check("rdmsr MCi_STATUS is 0", read(ctl + 1), 0);
    test.check("rdmsr MCi_ADDR is 0", read(ctl + 2), 0);
    test.check("rdmsr MCi_MISC is 0", read(ctl + 3), 0);
    test.check("wrmsr MCi_STATUS 0 works", probe_wrmsr(ctl + 1, 0), 0);
    test.check("wrmsr MCi_STATUS nonzero is #GP(0)", probe_wrmsr(ctl + 1, 1ull << 63), kGeneralProtection0);
    test.check("wrmsr MCi_ADDR nonzero is #GP(0)", probe_wrmsr(ctl + 2, 0x1000), kGeneralProtection0);
    test.check("wrmsr MCi_MISC nonzero is #GP(0)", probe_wrmsr(ctl + 3, 1), kGeneralProtection0);
    test.check("  and MCi_STATUS is still 0", read(ctl + 1), 0);
    if (!intel()) continue;
    test.check("wrmsr MCi_CTL2 (Intel) works", probe_wrmsr(kMc0Ctl2 + bank, 0x7fff), 0);
    test.check("  and reads back", read(kMc0Ctl2 + bank), 0x7fff);
    test.check("wrmsr MCi_CTL2 0 works", probe_wrmsr(kMc0Ctl2 + bank, 0), 0);
  }
  // Past Xen's two banks, up to MC31_MISC: read 0, writes (even nonzero STATUS) ignored.
  test.check("rdmsr MC2_CTL (beyond the banks) is 0", read(kMc0Ctl + 8), 0);
  test.check("wrmsr MC2_STATUS nonzero is ignored", probe_wrmsr(kMc0Ctl + 9, 1), 0);
  test.check("  and MC2_STATUS reads 0", read(kMc0Ctl + 9), 0);
  test.check("rdmsr MC31_MISC is 0", read(kMc0Ctl + 4 * 31 + 3), 0);
  test.check("rdmsr MC31_CTL2 is 0", read(kMc0Ctl2 + 31), 0);
  test.check("rdmsr 0x480 (past the bank range) is #GP(0)", read(kMc0Ctl + 4 * 32), kGeneralProtection0);
}

void platform(SelfTest& test) {
  test.check("rdmsr PAT is Xen's layout (WB WT UC- UC WC WP UC UC)", read(kPat), 0x050100070406);
  test.check("wrmsr PAT of that same value is #GP(0)", probe_wrmsr(kPat, 0x050100070406), kGeneralProtection0);
  const long efer = read(kEfer);
  test.check("rdmsr EFER has SCE, LME, LMA, NXE", efer & 0xd01, 0xd01);
  test.check("  and hides SVME", efer & (1 << 12), 0);
  test.check("wrmsr EFER of its own value works (Linux writes it back)", probe_wrmsr(kEfer, uint64_t(efer)), 0);
  test.check("wrmsr EFER setting SVME is #GP(0)", probe_wrmsr(kEfer, uint64_t(efer) | (1 << 12)), kGeneralProtection0);
  test.check("wrmsr EFER clearing NXE is #GP(0)", probe_wrmsr(kEfer, uint64_t(efer) & ~(1ull << 11)),
             kGeneralProtection0);
  test.check("  and EFER is as it was", read(kEfer), efer);
  test.check("rdmsr APIC_BASE: enabled at 0xfee00000, BSP", read(kApicBase), 0xfee00900);
  test.check("wrmsr APIC_BASE is #GP(0)", probe_wrmsr(kApicBase, 0xfee00900), kGeneralProtection0);
  uint64_t value = 0;
  test.check("rdmsr MISC_ENABLE works", probe_rdmsr(kMiscEnable, &value), 0);
  const long misc = long(value);
  test.check("MISC_ENABLE: BTS, PEBS unavailable, xTPR disabled", misc & 0x801800, 0x801800);
  test.check("MISC_ENABLE: perfmon and MONITOR hidden", misc & 0x40080, 0);
  test.check("wrmsr MISC_ENABLE of another value is dropped", probe_wrmsr(kMiscEnable, 0), 0);
  test.check("  and MISC_ENABLE is as it was", read(kMiscEnable), misc);
  uint64_t revision = 0;
  test.check("rdmsr of the microcode revision works", probe_rdmsr(kUcodeRev, &revision), 0);
  if (intel()) {
    test.check("wrmsr 0 to the microcode revision (Intel's protocol) works", probe_wrmsr(kUcodeRev, 0), 0);
    test.check("  and the revision is unchanged", read(kUcodeRev), long(revision));
    test.check("rdmsr FEATURE_CONTROL: locked, nothing enabled", read(kFeatureControl), 1);
    test.check("rdmsr PERF_CTL is 0", read(kPerfCtl), 0);
    test.check("wrmsr PERF_CTL is ignored", probe_wrmsr(kPerfCtl, 0xff00), 0);
    test.check("rdmsr THERM_STATUS is 0", read(kThermStatus), 0);
  }
  test.check("wrmsr of a nonzero microcode revision is #GP(0)", probe_wrmsr(kUcodeRev, 1), kGeneralProtection0);
  test.check("wrmsr UCODE_WRITE (a microcode load) is #GP(0)", probe_wrmsr(kUcodeWrite, 0x1000), kGeneralProtection0);
  test.check("wrmsr FEATURE_CONTROL is #GP(0)", probe_wrmsr(kFeatureControl, 1), kGeneralProtection0);
  test.check("rdmsr PLATFORM_INFO works", probe_rdmsr(kPlatformInfo, &value), 0);
  const bool faulting = value & (1ull << 31);
  test.check("rdmsr MISC_FEATURES_ENABLES is 0", read(kMiscFeatures), 0);
  test.check("wrmsr MISC_FEATURES_ENABLES reserved bit 1 is #GP(0)", probe_wrmsr(kMiscFeatures, 2),
             kGeneralProtection0);
  test.check("wrmsr MISC_FEATURES_ENABLES CPUID faulting: as PLATFORM_INFO offers", probe_wrmsr(kMiscFeatures, 1),
             faulting ? 0 : kGeneralProtection0);
  test.check("wrmsr MISC_FEATURES_ENABLES 0 works", probe_wrmsr(kMiscFeatures, 0), 0);
  test.check("wrmsr PLATFORM_INFO (read-only) is #GP(0)", probe_wrmsr(kPlatformInfo, 0), kGeneralProtection0);
  const long tsc = read(kTsc);
  test.check("rdmsr TSC works and advances", read(kTsc) > tsc, true);
  test.check("wrmsr TSC is #GP(0)", probe_wrmsr(kTsc, 0), kGeneralProtection0);
  test.check("wrmsr SYSENTER_EIP is #GP(0)", probe_wrmsr(kSysenterEip, 0), kGeneralProtection0);
  test.check("rdmsr SYSENTER_EIP is #GP(0)", read(kSysenterEip), kGeneralProtection0);
}
}  // namespace

void selftest_msr(SelfTest& test) {
  machine_check_globals(test);
  machine_check_banks(test);
  platform(test);
}
}  // namespace kernel
