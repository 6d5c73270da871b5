#pragma once
#include "abi/xen_abi.h"

namespace mm {

// What the MMU rules need to know about the domain issuing an operation.
struct DomainIdentity {
  domid_t id = 0;
  // May map frames of other guest domains through L1 entries (dom0, the domain builder).
  bool privileged = false;
  // VMASST_TYPE_m2p_strict: hide the read-only M2P from guest user mode (see README).
  bool m2p_strict = false;
};

constexpr bool is_guest_domain(domid_t id) { return id < DOMID_FIRST_RESERVED; }

}  // namespace mm
