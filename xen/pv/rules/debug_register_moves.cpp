#include "pv/rules/debug_register_moves.h"
#include "abi/xen_abi.h"

namespace debug_register_moves {

Outcome perform(debug_registers::State& state, const control_registers::Decoded& move, uint64_t& gpr, bool cr4_de) {
  if (!move.to_cr) {
    uint64_t value = 0;
    if (debug_registers::get(state, move.cr, cr4_de, value) != 0) return Outcome::invalid_opcode;
    gpr = value;
    return Outcome::done;
  }
  switch (debug_registers::set(state, move.cr, gpr, cr4_de)) {
    case 0: return Outcome::done;
    case -XEN_ENODEV: return Outcome::invalid_opcode;
    default: return Outcome::general_protection;
  }
}

}  // namespace debug_register_moves
