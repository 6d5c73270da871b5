#pragma once
// System calls for hypervisor measurements (user/pvhv.h): the hypervisor's performance
// counters and the page-table-entry write microbenchmark.
#include <stdint.h>
#include "user/pvhv.h"

namespace kernel {

constexpr uint64_t kPvhvCounters = 1000;  // PVHV_SYS_counters
constexpr uint64_t kPvhvPteBench = 1001;  // PVHV_SYS_pte_bench
constexpr uint64_t kPvhvAudit = 1002;     // PVHV_SYS_audit

long sys_pvhv_counters(uint64_t out);
// The same counters for the kernel itself: 0, or -ENOSYS where the hypervisor has none.
long read_pvhv_counters(struct ::pvhv_counters& out);
long sys_pvhv_pte_bench(uint64_t count);
long sys_pvhv_audit();

}  // namespace kernel
