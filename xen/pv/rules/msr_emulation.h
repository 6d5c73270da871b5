// rdmsr / wrmsr from a PV guest kernel, as Xen 4.17 serves them (arch/x86/msr.c guest_rdmsr /
// guest_wrmsr, then pv/emul-priv-op.c read_msr / write_msr, and cpu/mcheck/vmce.c): the guest
// runs in ring 3, so these fault with #GP and the hypervisor decides. Served:
//  - the segment bases a 64-bit PV kernel owns (FS_BASE, GS_BASE: the kernel's own,
//    SHADOW_GS_BASE: user mode's), as Linux's startup_xen writes GS_BASE before anything else;
//    a non-canonical base is refused;
//  - the virtual machine-check architecture (vMCE): MCG_CAP (Intel: SER_P, TES_P, CMCI_P and
//    Xen's two banks; AMD: the two banks), MCG_STATUS (the guest's), MCG_CTL (absent: reads 0,
//    writes ignored), MCG_EXT_CTL refused (no LMCE), bank i's CTL (all ones), STATUS, ADDR and
//    MISC (0, only 0 may be written), Intel's CTL2 (the guest's) and the P5 pair; the rest of
//    the bank ranges read 0 and ignore writes, as Xen's vmce_rdmsr leaves them. Linux's
//    mce_rdmsrl panics ("MCA architectural violation") on a #GP from any of them;
//  - PAT (Xen's own layout, XEN_MSR_PAT), EFER (the hardware's known bits without SVME; only
//    its own value may be written back), APIC_BASE (enabled at the default address, BSP on
//    vCPU 0), MISC_ENABLE (the hardware's with perfmon and MONITOR hidden, BTS / PEBS / xTPR
//    off; a write of any other value is dropped), the TSC, the microcode revision (the
//    hardware's; Intel's architectural write of 0), FEATURE_CONTROL (locked, nothing enabled),
//    PLATFORM_INFO (no CPUID faulting offered) and MISC_FEATURES_ENABLES (0 only), and the
//    power / performance MSRs Xen answers with 0 or ignores for a domain that is not the
//    cpufreq controller (vPMU off: the performance counters too);
//  - everything else is the guest's #GP, which Linux's rdmsr_safe / wrmsr_safe rely on, except
//    Xen's "faking RDMSR": a guest with no #GP handler yet reads 0 from an MSR the CPU has.
// The hypervisor's CPU is reached only through `Host` (hardware reads that may fail), so the
// rules are unit-tested on the host.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "arch/x86/cpu/registers.h"

namespace msr_emulation {

// The decoded instruction: 0f 30 (wrmsr) or 0f 32 (rdmsr), optionally after one REX prefix.
enum class Instruction { none, rdmsr, wrmsr };
struct Decoded {
  Instruction instruction = Instruction::none;
  unsigned length = 0;
};
Decoded decode(const uint8_t* bytes, size_t available);

// The bases as the guest kernel sees them (it is in kernel mode when it executes these).
struct SegmentBases {
  uint64_t fs = 0;
  uint64_t gs_kernel = 0;
  uint64_t gs_user = 0;
};

// Xen's vMCE state of one vCPU (struct vmce): GUEST_MC_BANK_NUM banks.
inline constexpr unsigned kGuestBanks = 2;
struct VmceBank {
  uint64_t status = 0, addr = 0, misc = 0, ctl2 = 0;
};
struct VcpuMsrs {
  uint64_t mcg_status = 0;
  VmceBank bank[kGuestBanks];
  uint64_t misc_features_enables = 0;
};

enum class Vendor { intel, amd, other };

// What the hypervisor knows about the CPU and the asking vCPU.
struct Host {
  Vendor vendor = Vendor::intel;
  unsigned vcpu_id = 0;
  uint64_t efer = 0;  // the hardware's EFER
  // rdmsr that reports an MSR the CPU does not have (rdmsr_safe); the TSC.
  bool (*read_hardware)(uint32_t msr, uint64_t& value) = nullptr;
  uint64_t (*read_tsc)() = nullptr;
  bool guest_has_gp_handler = true;  // its trap table has a #GP entry
};

namespace msr {
inline constexpr uint32_t p5_mc_addr = 0x0, p5_mc_type = 0x1, tsc = 0x10, platform_id = 0x17, feature_control = 0x3a,
                          ucode_write = 0x79, ucode_rev = 0x8b, platform_info = 0xce, misc_features_enables = 0x140,
                          mcg_cap = 0x179, mcg_status = 0x17a, mcg_ctl = 0x17b, misc_enable = 0x1a0, pat = 0x277,
                          mc0_ctl2 = 0x280, perf_capabilities = 0x345, mc0_ctl = 0x400, mcg_ext_ctl = 0x4d0;
}  // namespace msr

inline constexpr uint64_t kXenPat = cpu::xen_pat;  // XEN_MSR_PAT, as the hypervisor loads it
inline constexpr uint64_t kMcgCtlPresent = 1u << 8, kMcgCmci = 1u << 10, kMcgTes = 1u << 11, kMcgSer = 1u << 24;
inline constexpr uint64_t kApicBaseBsp = 1u << 8, kApicBaseEnable = 1u << 11, kApicDefaultBase = 0xfee00000;
inline constexpr uint64_t kMiscEnablePerfAvail = 1u << 7, kMiscEnableBtsUnavail = 1u << 11,
                          kMiscEnablePebsUnavail = 1u << 12, kMiscEnableMonitor = 1u << 18,
                          kMiscEnableXtprDisable = 1u << 23;
uint64_t mcg_cap(Vendor vendor);
uint64_t guest_efer(uint64_t hardware_efer);
uint64_t guest_misc_enable(uint64_t hardware_misc_enable);

// false: the guest's #GP. true: `value` read, or the write done (`bases` / `vcpu` updated).
bool read(const Host& host, const SegmentBases& bases, const VcpuMsrs& vcpu, uint32_t msr, uint64_t& value);
bool write(const Host& host, SegmentBases& bases, VcpuMsrs& vcpu, uint32_t msr, uint64_t value);

}  // namespace msr_emulation
