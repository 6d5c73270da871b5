// Software interrupts (`int $n`) from a PV guest, as Xen 4.17 takes them. Every IDT gate the
// hypervisor has is DPL 0 (but int3 and into), so a guest's `int $n` raises #GP with an error
// code that names the IDT entry (bit 1 set, bit 0 clear). The guest's own trap table says who
// may raise the vector: its entry's DPL (flags bits 0-1) at least the privilege the caller
// counts as (user mode 3, the guest kernel 1: Xen's permit_softint); then the interrupt goes
// to that entry's handler with rip past the instruction, without an error code; otherwise the
// guest gets the #GP with the error code naming that IDT entry.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "arch/x86/cpu/trap_frame.h"

struct Vcpu;

namespace software_interrupt {
// A #GP whose error code names an IDT entry, raised by the software (not an external event).
constexpr bool names_idt_entry(uint32_t error_code) { return (error_code & 3) == 2; }

// The vector of the refused `int $n`: the instruction's own immediate when rip holds `CD ib`,
// else the error code's index. The two agree on hardware (index = error code >> 3); QEMU's TCG
// reports n*16+2 for a refused gate in long mode (the offset of the 16-byte gate), so only the
// instruction names the vector there.
constexpr unsigned vector(const uint8_t* bytes, size_t available, uint32_t error_code) {
  if (available >= 2 && bytes[0] == 0xcd) return bytes[1];
  return (error_code >> 3) & 0xff;
}
constexpr unsigned instruction_length = 2;  // CD ib

// The error code of the #GP the guest gets for a refused `int $n`: IDT entry n, as hardware
// gives it (and as Xen builds it for `int $0x80`, which its DPL-3 gate lets through first);
// QEMU's TCG would say n*16+2.
constexpr uint32_t refusal_error_code(unsigned vector) { return (vector << 3) | 2; }

// Xen's permit_softint(TI_GET_DPL(trap), v, regs).
constexpr bool permitted(uint8_t trap_flags, bool kernel_mode) {
  const unsigned dpl = trap_flags & 3;
  return dpl >= (kernel_mode ? 1u : 3u);
}

// Whether `int $n` reaches the trap table's handler. Xen 4.17 gives vector 0x80 a DPL-3 gate
// of its own (int80_direct_trap) that bounces to the guest's 0x80 handler whatever DPL the
// guest gave it; only without a handler does 0x80 take the #GP path and its DPL check.
constexpr unsigned legacy_syscall_vector = 0x80;
constexpr bool delivered(unsigned vector, uint8_t trap_flags, bool has_handler, bool kernel_mode) {
  if (vector == legacy_syscall_vector && has_handler) return true;
  return permitted(trap_flags, kernel_mode);
}

// sysenter (0F 34): the CPU raises #GP(0) for it here (IA32_SYSENTER_CS is left 0), which the
// hypervisor turns into the guest's sysenter callback as Xen's own entry point does.
constexpr bool is_sysenter(const uint8_t* bytes, size_t available) {
  return available >= 2 && bytes[0] == 0x0f && bytes[1] == 0x34;
}

// A guest #GP that is an `int $n` its trap table permits (delivered to that vector's handler),
// or a sysenter (delivered to the sysenter callback, or as Xen's #GP(0) without one): true
// when it was either and the guest now continues in its kernel (or was crashed for a
// handler it cannot take). False: the #GP is the guest's own.
bool deliver(Vcpu& vcpu, TrapFrame& frame);
}  // namespace software_interrupt
