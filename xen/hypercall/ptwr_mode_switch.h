// A domain's page-table write mode changed at run time (pvhv's ptwr-mode domctl): the mode
// lives in Domain::pt_write_mode, chosen at createdomain from the boot option ptwr=.
#pragma once
#include "common/xen/pvhv_domctl.h"

struct Domain;

namespace ptwr_mode_switch {
// Applies a get or set (control/ptwr_mode_rules decides); `request.mode` gets the domain's
// mode. Leaving writable reattaches every detached L1 of the domain before the mode changes,
// so no page table stays writable by the guest; entering it allocates the snapshot frames
// (-ENOMEM when there are none). kPtwrReadsUnhookedSet records the kernel's PVHV note for a
// domain a toolstack is building (the answer's `mode` is the flag).
long apply(Domain& target, pvhv::xen_abi::DomctlPtwrMode& request);
}  // namespace ptwr_mode_switch
