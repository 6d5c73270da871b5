// Pure: `mov` to and from DR0-DR7 by a PV guest kernel (0f 21 /r, 0f 23 /r), as Xen 4.17's
// pv/emul-priv-op.c serves them after the #GP through x86emul_read_dr / x86emul_write_dr: the
// same values and checks as HYPERVISOR_get_debugreg / set_debugreg (pv/rules/debug_registers), with
// the refusals as exceptions: a register that does not exist (DR4 / DR5 with CR4.DE, DR8 and up
// through REX.R) is #UD, a value set_debugreg refuses (-EPERM, -EINVAL) is #GP(0), and the
// register keeps its value. Guest user mode gets no help (privileged_op's check).
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "pv/rules/control_registers.h"
#include "pv/rules/debug_registers.h"

namespace debug_register_moves {

// 0f 21 (mov from DRn) or 0f 23 (mov to DRn) after at most one REX prefix; `cr` is the DR number.
inline control_registers::Decoded decode(const uint8_t* bytes, size_t available) {
  return control_registers::decode_move(bytes, available, 0x21);
}

enum class Outcome { done, invalid_opcode, general_protection };

// Performs the decoded move on `state` and `gpr` (the general register operand).
Outcome perform(debug_registers::State& state, const control_registers::Decoded& move, uint64_t& gpr, bool cr4_de);

}  // namespace debug_register_moves
