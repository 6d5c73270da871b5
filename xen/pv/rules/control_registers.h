// Pure: `mov` to and from CR0, CR2, CR3 and CR4 by a PV guest kernel, as Xen 4.17's
// pv/emul-priv-op.c read_cr / write_cr serve them after the #GP (Linux's xen_read_cr0 reads
// CR0 natively once; its early setup reads CR4 natively):
//  - CR0 reads as the hardware's with TS the guest's own (fpu_taskswitch); a write may change
//    only TS, anything else is refused (the guest's #GP);
//  - CR4 reads as the guest's view: its choice of TSD, DE, FSGSBASE and OSXSAVE (each only if
//    the CPUID policy offers it) and the hardware's PAE, MCE, OSFXSR and OSXMMEXCPT
//    (pv_fixup_guest_cr4); a write stores that view (the hardware CR4 stays the hypervisor's);
//  - CR2 reads as the guest's fault address; CR3 as its kernel base pointer (xen_pfn_to_cr3);
//    writes of CR2, CR3 and any other register are refused here.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "emulate/register_operand.h"

namespace control_registers {

// 0f 20 /r (mov from CRn) or 0f 22 /r (mov to CRn), after at most one REX prefix (REX.R
// names CR8 and up: not decoded). The register form is the only form (the CPU ignores mod).
struct Decoded {
  bool valid = false;
  bool to_cr = false;  // mov to CRn
  unsigned cr = 0;
  emulate::Gpr gpr = emulate::Gpr::rax;
  unsigned length = 0;
};
Decoded decode(const uint8_t* bytes, size_t available);
// The same form for either pair of opcodes: `from_opcode` (0f 20 for CRn, 0f 21 for DRn) and
// from_opcode + 2 (mov to); REX.R adds 8 to the register number (`cr`), which decode refuses.
Decoded decode_move(const uint8_t* bytes, size_t available, uint8_t from_opcode);

inline constexpr uint64_t cr0_ts = 1u << 3;
inline constexpr uint64_t cr4_tsd = 1u << 2, cr4_de = 1u << 3, cr4_pae = 1u << 5, cr4_mce = 1u << 6,
                          cr4_osfxsr = 1u << 9, cr4_osxmmexcpt = 1u << 10, cr4_fsgsbase = 1u << 16,
                          cr4_osxsave = 1u << 18;

// What the CPUID policy offers (pv_fixup_guest_cr4 discards the rest).
struct Cr4Policy {
  bool tsc = false, de = false, fsgsbase = false, xsave = false;
};
uint64_t guest_cr4(uint64_t requested, uint64_t hardware_cr4, const Cr4Policy& policy);

// The guest's view of the control registers and the hardware's.
struct State {
  uint64_t hardware_cr0 = 0, hardware_cr4 = 0;
  bool task_switched = false;  // the guest's TS
  uint64_t guest_cr4 = 0;      // its CR4 as it reads it
  uint64_t cr2 = 0;
  uint64_t kernel_table_mfn = 0;
  Cr4Policy policy;
};
// false: not served (the guest's #GP). On a read, `value` is the register.
bool read(const State& state, unsigned cr, uint64_t& value);
// false: refused. On success `state` holds the new TS or CR4 view.
bool write(State& state, unsigned cr, uint64_t value);

}  // namespace control_registers
