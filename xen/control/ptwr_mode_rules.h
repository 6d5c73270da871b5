// Pure: the rules of pvhv's ptwr-mode domctl (common/xen/pvhv_domctl.h), after do_domctl's
// own admission (interface version -EACCES, no such domain -ESRCH, not the control domain
// -EPERM: control/domctl_rules.h). The glue (hypercall/ptwr_mode_switch.cpp) applies the answer.
#pragma once
#include <stdint.h>

#include "common/xen/pvhv_domctl.h"

namespace control {

// What a checked request asks of the domain.
enum class PtwrModeAction : uint8_t {
  report,             // a get, or a set to the mode the domain has: nothing changes
  enable_writable,    // emulate -> writable or adaptive: the snapshot storage is allocated first
  rehook_to_emulate,  // writable or adaptive -> emulate: every detached L1 is reattached first
  switch_detaching,   // writable <-> adaptive: both detach tables; the storage stays
};

struct PtwrModeDecision {
  long error = 0;  // -XEN_EINVAL: unknown op or mode, reserved fields set, a dying domain
  PtwrModeAction action = PtwrModeAction::report;
};

// `current_mode`: the domain's mode now (kPtwrEmulate, kPtwrWritable or kPtwrAdaptive). A set
// on a dying domain is refused: its teardown has freed (or is freeing) what the detaching
// modes need.
PtwrModeDecision decide_ptwr_mode(const pvhv::xen_abi::DomctlPtwrMode& request, uint32_t current_mode,
                                  bool target_dying);

// kPtwrReadsUnhookedSet (the kernel's PVHV note from a toolstack's builder): 0 to apply it,
// -XEN_EINVAL for a flag other than 0 or 1, reserved fields set or a dying domain,
// -XEN_EEXIST once the domain has been unpaused (Xen's creation_finished).
long decide_reads_unhooked(const pvhv::xen_abi::DomctlPtwrMode& request, bool target_dying, bool creation_finished);

}  // namespace control
