// pvhv's own domctl, outside Xen's numbering (Xen 4.17's domctls end below 1010; 0x8000 is
// where our private sysctl lives too): the per-domain page-table write mode, read and set at
// run time, and whether its kernel reads unhooked entries (our PVHV ELF note). One layout for the hypervisor
// (hypercall/domctl.cpp), the library (pvhv_xc_ptwr_mode) and the guest kernel's selftest, so the three never disagree.
// Header-only and freestanding. Xen 4.17 answers the number with -ENOSYS (arch_do_domctl).
#pragma once
#include <stdint.h>

namespace pvhv::xen_abi {

inline constexpr uint32_t kDomctlPtwrMode = 0x8001;

// In xen_domctl_t's union (u.pad). `op` get or set; `mode` the mode to set, and on return
// the domain's mode (after a set: the new one). The rest must be zero.
struct DomctlPtwrMode {
  uint32_t op;
  uint32_t mode;
  uint64_t reserved[2];
};

inline constexpr uint32_t kPtwrModeGet = 0;
inline constexpr uint32_t kPtwrModeSet = 1;
// The kernel's PVHV note passed on by a toolstack's builder (libxenguest): `mode` 1 says the
// kernel reads an unhooked L2 entry as its table (writable pagetables may then unhook its
// reachable L1s: ptwr/writable_pagetables.h), 0 that it does not (the default); on return the
// flag now. Only before the domain first runs (else -EEXIST, as Xen refuses a CPU policy once
// creation_finished); any other value -EINVAL.
inline constexpr uint32_t kPtwrReadsUnhookedSet = 0x10;
inline constexpr uint32_t kPtwrEmulate = 0;   // every write to a page table is emulated
inline constexpr uint32_t kPtwrWritable = 1;  // L1 tables are detached (writable pagetables)
inline constexpr uint32_t kPtwrAdaptive = 2;  // per L1: emulated while sparse, detached for runs

}  // namespace pvhv::xen_abi
