#include "control/ptwr_mode_rules.h"

#include "control/control_abi.h"

namespace control {
namespace abi = pvhv::xen_abi;

PtwrModeDecision decide_ptwr_mode(const abi::DomctlPtwrMode& request, uint32_t current_mode, bool target_dying) {
  PtwrModeDecision decision;
  const bool reserved_clear = request.reserved[0] == 0 && request.reserved[1] == 0;
  if (!reserved_clear || (request.op != abi::kPtwrModeGet && request.op != abi::kPtwrModeSet)) {
    decision.error = -XEN_EINVAL;
    return decision;
  }
  if (request.op == abi::kPtwrModeGet) return decision;
  if (request.mode != abi::kPtwrEmulate && request.mode != abi::kPtwrWritable && request.mode != abi::kPtwrAdaptive) {
    decision.error = -XEN_EINVAL;
    return decision;
  }
  if (target_dying) {
    decision.error = -XEN_EINVAL;
    return decision;
  }
  if (request.mode == current_mode) return decision;
  if (current_mode == abi::kPtwrEmulate)
    decision.action = PtwrModeAction::enable_writable;
  else if (request.mode == abi::kPtwrEmulate)
    decision.action = PtwrModeAction::rehook_to_emulate;
  else
    decision.action = PtwrModeAction::switch_detaching;
  return decision;
}

long decide_reads_unhooked(const abi::DomctlPtwrMode& request, bool target_dying, bool creation_finished) {
  const bool reserved_clear = request.reserved[0] == 0 && request.reserved[1] == 0;
  if (request.op != abi::kPtwrReadsUnhookedSet || !reserved_clear || request.mode > 1 || target_dying)
    return -XEN_EINVAL;
  return creation_finished ? -XEN_EEXIST : 0;
}

}  // namespace control
