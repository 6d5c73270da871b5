#pragma once
// Hypervisor measurements, for the kernel and behind the system calls of user/pvhv.h
// (kernel/process/syscalls.cpp): the hypervisor's performance counters, its frame audit and
// the page-table-entry write microbenchmark.
#include <stdint.h>
#include "user/pvhv.h"

namespace kernel {

constexpr uint64_t kPvhvCounters = 1000;  // PVHV_SYS_counters
constexpr uint64_t kPvhvPteBench = 1001;  // PVHV_SYS_pte_bench
constexpr uint64_t kPvhvAudit = 1002;     // PVHV_SYS_audit
constexpr uint64_t kPvhvDebugreg = 1003;  // PVHV_SYS_debugreg

// The hypervisor's performance counters: 0, or -ENOSYS where the hypervisor has none.
long read_pvhv_counters(struct ::pvhv_counters& out);
long sys_pvhv_pte_bench(uint64_t count);
long sys_pvhv_audit();
long sys_pvhv_debugreg(uint64_t operation, uint64_t reg, uint64_t value);

}  // namespace kernel
