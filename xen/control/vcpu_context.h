// Pure: the checks XEN_DOMCTL_setvcpucontext and VCPUOP_initialise make of a 64-bit PV
// vcpu_guest_context before anything changes, as Xen 4.17's arch_set_info_guest
// (xen/arch/x86/domain.c): canonical
// addresses (rip, rsp, kernel_sp, fs/gs bases, the event, failsafe and syscall callbacks,
// every trap handler, the LDT base when there is an LDT), selectors brought to the guest
// kernel's RPL 3 (Xen's fixup_guest_{stack,code}_selector: fixed, not refused), LDT base page
// aligned with at most 8192 entries, at most 16 GDT frames, vm_assist within the PV64 mask
// (vCPU 0), and a first context in kernel mode or with a user page table. A vCPU already
// initialised takes a new context only with the same page tables and descriptor tables
// (-EOPNOTSUPP otherwise). What the frames named are (a CR3 that is not an L4 of the domain's,
// a GDT frame that is not a descriptor page of its) is checked when they are taken (-EINVAL).
#pragma once
#include "control/control_abi.h"

namespace control {
bool canonical(uint64_t address);

// What the vCPU has now, for a context given to an initialised vCPU.
struct VcpuTablesNow {
  bool initialised = false;
  uint64_t kernel_l4_mfn = 0, user_l4_mfn = 0;  // 0: none
  unsigned gdt_entries = 0;
  const uint64_t* gdt_frames = nullptr;  // (gdt_entries + 511) / 512 of them
  uint64_t ldt_base = 0;
  unsigned ldt_entries = 0;
};

// Brings every selector to RPL 3 (user_regs.cs/ss, kernel_ss, each trap's cs), as Xen.
void fix_guest_selectors(vcpu_guest_context& context);

// 0, or -EINVAL / -EOPNOTSUPP as Xen.
long check_vcpu_context(const vcpu_guest_context& context, uint32_t vcpu_id, const VcpuTablesNow& now);

// The page-table frames the context names (Xen's xen_cr3_to_pfn of ctrlreg[3] and [1]).
inline uint64_t kernel_l4_of(const vcpu_guest_context& context) { return context.ctrlreg[3] >> 12; }
inline uint64_t user_l4_of(const vcpu_guest_context& context) { return context.ctrlreg[1] >> 12; }

// XEN_DOMCTL_set_address_size for a PV domain: 64 is what it is (0); 32 is Xen's answer
// without 32-bit PV support (opt_pv32 off: -EOPNOTSUPP), since ours runs no compat guests;
// anything else -EINVAL.
long check_address_size(uint32_t size);
constexpr uint32_t pv_address_size = 64;
}  // namespace control
