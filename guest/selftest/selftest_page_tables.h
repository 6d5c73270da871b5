#pragma once
// What the page-table self-tests (selftest_ptwr_hostile.cpp, selftest_flush_clock.cpp) share:
// entry flags, raw access to a table through the direct map, a free slot to link into, the
// MMU hypercall that asks for nothing, and the frame audit as a check.
#include <stdint.h>

#include "arch/hypercall.h"
#include "arch/xen.h"
#include "kernel/memory/direct_map.h"
#include "lib/linux_abi.h"
#include "kernel/memory/physical_memory.h"
#include "kernel/measurement/pvhv.h"
#include "selftest/selftest.h"

namespace kernel::page_table_tests {

constexpr uint64_t kReadOnly = PageTableEntry::kPresent | PageTableEntry::kAccessed;
constexpr uint64_t kWritable = kReadOnly | PageTableEntry::kWritable | PageTableEntry::kDirty;
// Entries stored directly carry US: the kernel runs in ring 3, and an entry that bypassed
// validation keeps exactly what was stored (validation would have added US itself).
constexpr uint64_t kUserReadOnly = kReadOnly | PageTableEntry::kUser;
constexpr uint64_t kUserWritable = kWritable | PageTableEntry::kUser;
constexpr uint64_t kRegion = 2ull << 20;  // what one L1 maps

inline uint64_t entry(Mfn mfn, uint64_t flags) { return PageTableEntry::make(mfn, flags).raw(); }
inline volatile uint64_t* entries_of(Mfn table) { return reinterpret_cast<volatile uint64_t*>(mfn_to_va(table)); }

// An MMU hypercall that asks for nothing: the hypervisor reattaches detached tables first and
// flushes no TLB (a flush would hide what the tests look for).
inline long empty_mmuext_op() { return arch::hypercall(__HYPERVISOR_mmuext_op, 0, 0, 0, DOMID_SELF); }

// An empty entry of `table` in [first, last], searched from the top; 0 if none.
inline unsigned free_slot(Mfn table, unsigned first, unsigned last) {
  for (unsigned index = last; index >= first && index > 0; --index)
    if (entries_of(table)[index] == 0) return index;
  return 0;
}

// On our hypervisor every count must agree with the page tables; elsewhere there is no audit.
inline void check_audit(SelfTest& test) {
  const long mismatches = sys_pvhv_audit();
  if (mismatches == -linux_abi::kENOSYS)
    test.note("frame audit not available here (not our hypervisor, or unprivileged)", mismatches);
  else
    test.check("frame audit: every count agrees with the page tables", mismatches, 0);
}

}  // namespace kernel::page_table_tests
