#include "pv/rules/msr_emulation.h"
#include "arch/x86/cpu/canonical.h"

namespace msr_emulation {

Decoded decode(const uint8_t* bytes, size_t available) {
  size_t i = (available > 0 && (bytes[0] & 0xf0) == 0x40) ? 1 : 0;  // REX changes nothing here
  if (available < i + 2 || bytes[i] != 0x0f) return {};
  if (bytes[i + 1] == 0x30) return {Instruction::wrmsr, unsigned(i + 2)};
  if (bytes[i + 1] == 0x32) return {Instruction::rdmsr, unsigned(i + 2)};
  return {};
}

uint64_t mcg_cap(Vendor vendor) { return (vendor == Vendor::intel ? kMcgSer | kMcgTes | kMcgCmci : 0) | kGuestBanks; }

uint64_t guest_efer(uint64_t hardware_efer) {
  constexpr uint64_t sce = 1, lme = 1u << 8, lma = 1u << 10, nxe = 1u << 11, ffxse = 1u << 14;
  return hardware_efer & (sce | lme | lma | nxe | ffxse);  // EFER_KNOWN_MASK without SVME
}

uint64_t guest_misc_enable(uint64_t hardware_misc_enable) {
  return (hardware_misc_enable & ~(kMiscEnablePerfAvail | kMiscEnableMonitor)) | kMiscEnableBtsUnavail |
         kMiscEnablePebsUnavail | kMiscEnableXtprDisable;
}

namespace {
uint64_t* base_of(uint32_t msr, SegmentBases& bases) {
  switch (msr) {
    case cpu::msr::fs_base: return &bases.fs;
    case cpu::msr::gs_base: return &bases.gs_kernel;
    case cpu::msr::kernel_gs_base: return &bases.gs_user;  // SHADOW_GS_BASE: user mode's GS
    default: return nullptr;
  }
}

bool in(uint32_t msr, uint32_t first, uint32_t last) { return msr >= first && msr <= last; }

// ---- vMCE ----
// The MSRs guest_rdmsr / guest_wrmsr hand to vmce_rdmsr / vmce_wrmsr.
bool vmce_range(uint32_t msr) {
  return in(msr, msr::mcg_cap, msr::mcg_ctl) || in(msr, msr::mc0_ctl2, msr::mc0_ctl2 + 31) ||
         in(msr, msr::mc0_ctl, msr::mc0_ctl + 4 * 32 - 1) || msr == msr::mcg_ext_ctl;
}

// Xen's mce_bank_msr: the banks MCG_CAP announces, Intel's CTL2 of those and the P5 pair.
bool bank_msr(const Host& host, uint32_t msr) {
  const uint32_t count = uint32_t(mcg_cap(host.vendor) & 0xff);
  if (msr >= msr::mc0_ctl && msr < msr::mc0_ctl + 4 * count) return true;
  if (host.vendor != Vendor::intel) return false;
  return (msr >= msr::mc0_ctl2 && msr < msr::mc0_ctl2 + count) || msr == msr::p5_mc_addr || msr == msr::p5_mc_type;
}

// Bank i of the 0x400 range: CTL, STATUS, ADDR, MISC; -1 for the vendor-specific ones.
int bank_register(uint32_t msr) { return msr >= msr::mc0_ctl ? int((msr - msr::mc0_ctl) % 4) : -1; }
unsigned bank_index(uint32_t msr) { return (msr - msr::mc0_ctl) / 4; }

// STATUS, ADDR or MISC of one of the guest's banks (null beyond them: those read 0).
template <typename Msrs>
auto bank_field(Msrs& vcpu, uint32_t msr) -> decltype(&vcpu.mcg_status) {
  const unsigned bank = bank_index(msr);
  if (bank >= kGuestBanks) return nullptr;
  switch (bank_register(msr)) {
    case 1: return &vcpu.bank[bank].status;
    case 2: return &vcpu.bank[bank].addr;
    case 3: return &vcpu.bank[bank].misc;
    default: return nullptr;
  }
}

uint64_t vendor_bank_read(const Host& host, const VcpuMsrs& vcpu, uint32_t msr) {
  if (host.vendor != Vendor::intel) return 0;            // AMD: banks not emulated
  if (msr == msr::p5_mc_addr) return vcpu.bank[1].addr;  // Xen's "bank 0 quirk"
  if (msr == msr::p5_mc_type) return vcpu.bank[1].status;
  const uint32_t bank = msr - msr::mc0_ctl2;
  return bank < kGuestBanks ? vcpu.bank[bank].ctl2 : 0;
}

// vmce_rdmsr: false is its "< 0" (#GP); an MSR of the range it does not handle reads 0.
bool vmce_read(const Host& host, const VcpuMsrs& vcpu, uint32_t msr, uint64_t& value) {
  value = 0;
  switch (msr) {
    case msr::mcg_status: value = vcpu.mcg_status; return true;
    case msr::mcg_cap: value = mcg_cap(host.vendor); return true;
    case msr::mcg_ctl: value = (mcg_cap(host.vendor) & kMcgCtlPresent) ? ~0ull : 0; return true;
    case msr::mcg_ext_ctl: return false;  // no MCG_LMCE_P
    default: break;
  }
  if (!bank_msr(host, msr)) return true;
  switch (bank_register(msr)) {
    case 0: value = ~0ull; return true;  // MCi_CTL: all ones
    case -1: value = vendor_bank_read(host, vcpu, msr); return true;
    default: {
      const uint64_t* field = bank_field(vcpu, msr);
      value = field ? *field : 0;
      return true;
    }
  }
}

bool vmce_write(const Host& host, VcpuMsrs& vcpu, uint32_t msr, uint64_t value) {
  switch (msr) {
    case msr::mcg_status: vcpu.mcg_status = value; return true;
    case msr::mcg_cap:               // read-only: the write changes nothing
    case msr::mcg_ctl: return true;  // absent: ignored
    case msr::mcg_ext_ctl: return false;
    default: break;
  }
  if (!bank_msr(host, msr)) return true;
  switch (bank_register(msr)) {
    case 0: return true;  // clearing bits of MCi_CTL is ignored
    case -1: {
      const uint32_t bank = msr - msr::mc0_ctl2;  // Intel's CTL2 (the P5 pair: out of range)
      if (host.vendor == Vendor::intel && bank < kGuestBanks) vcpu.bank[bank].ctl2 = value;
      return true;
    }
    default: {
      if (value != 0) return false;  // STATUS, ADDR, MISC: only clearing
      if (uint64_t* field = bank_field(vcpu, msr)) *field = 0;
      return true;
    }
  }
}

// ---- the rest of guest_rdmsr / read_msr ----
bool intel_perf_counter(uint32_t msr) {
  return in(msr, 0xc1, 0xc8) || in(msr, 0x186, 0x189) || in(msr, 0x309, 0x30b) || in(msr, 0x38d, 0x390);
}
bool amd_perf_counter(uint32_t msr) { return in(msr, 0xc0010000, 0xc0010007) || in(msr, 0xc0010200, 0xc001020b); }
// vPMU is off (Xen's default): the counters read 0 and ignore writes.
bool perf_counter(const Host& host, uint32_t msr) {
  return (host.vendor == Vendor::intel && intel_perf_counter(msr)) ||
         (host.vendor == Vendor::amd && amd_perf_counter(msr));
}

bool hardware(const Host& host, uint32_t msr, uint64_t& value) {
  return host.read_hardware != nullptr && host.read_hardware(msr, value);
}

bool read_served(const Host& host, const SegmentBases& bases, const VcpuMsrs& vcpu, uint32_t msr, uint64_t& value) {
  const bool intel = host.vendor == Vendor::intel;
  if (vmce_range(msr) || msr == msr::p5_mc_addr || msr == msr::p5_mc_type) return vmce_read(host, vcpu, msr, value);
  if (perf_counter(host, msr)) {
    value = 0;
    return true;
  }
  switch (msr) {
    case cpu::msr::fs_base: value = bases.fs; return true;
    case cpu::msr::gs_base: value = bases.gs_kernel; return true;
    case cpu::msr::kernel_gs_base: value = bases.gs_user; return true;
    case msr::platform_id: return intel && hardware(host, msr, value);
    case msr::ucode_rev: return host.vendor != Vendor::other && hardware(host, msr, value);
    case msr::feature_control: value = 1; return intel;  // locked, VMX and LMCE off
    case msr::platform_info: value = 0; return true;     // no CPUID faulting offered
    case msr::misc_features_enables: value = vcpu.misc_features_enables; return true;
    case 0x198:  // PERF_STATUS
    case 0x199:  // PERF_CTL
    case 0x19c:  // THERM_STATUS
      value = 0;
      return intel;
    case cpu::msr::apic_base:
      value = kApicBaseEnable | kApicDefaultBase | (host.vcpu_id == 0 ? kApicBaseBsp : 0);
      return true;
    case msr::tsc: value = host.read_tsc ? host.read_tsc() : 0; return host.read_tsc != nullptr;
    case cpu::msr::efer: value = guest_efer(host.efer); return true;
    case msr::pat: value = kXenPat; return true;
    case msr::misc_enable:
      if (!hardware(host, msr, value)) return false;
      value = guest_misc_enable(value);
      return true;
    case msr::perf_capabilities: value = 0; return true;
    default: return false;
  }
}
}  // namespace

bool read(const Host& host, const SegmentBases& bases, const VcpuMsrs& vcpu, uint32_t msr, uint64_t& value) {
  if (read_served(host, bases, vcpu, msr, value)) return true;
  // Xen's "faking RDMSR": before the guest has a #GP handler, an MSR the CPU has reads 0.
  uint64_t ignored = 0;
  if (!host.guest_has_gp_handler && (msr >> 16) != 0x4000 && hardware(host, msr, ignored)) {
    value = 0;
    return true;
  }
  return false;
}

bool write(const Host& host, SegmentBases& bases, VcpuMsrs& vcpu, uint32_t msr, uint64_t value) {
  const bool intel = host.vendor == Vendor::intel;
  if (vmce_range(msr)) return vmce_write(host, vcpu, msr, value);
  if (perf_counter(host, msr)) return true;
  if (uint64_t* base = base_of(msr, bases)) {
    if (!cpu::canonical(value)) return false;
    *base = value;
    return true;
  }
  uint64_t current = 0;
  switch (msr) {
    case msr::ucode_rev: return intel && value == 0;  // Intel's "write 0, CPUID, read"
    case msr::misc_features_enables:
      if (value != 0) return false;  // CPUID faulting is not offered: every bit reserved
      vcpu.misc_features_enables = value;
      return true;
    case 0x199:  // PERF_CTL
    case 0x19a:  // THERM_CONTROL
    case 0x1b0:  // ENERGY_PERF_BIAS
      return intel;
    case 0xe7:  // MPERF
    case 0xe8:  // APERF
      return host.vendor != Vendor::other;
    case cpu::msr::efer: return value == guest_efer(host.efer);  // Linux writes its value back
    case msr::misc_enable: return hardware(host, msr, current);  // any other value is dropped
    default: return false;
  }
}

}  // namespace msr_emulation
