// The hypervisor self-tests of the cross-CPU primitives and the lock order (tests only).
#pragma once

namespace cross_cpu {
// selftest=ipi (with_counter_lock) and ipi-unlocked: calls to each CPU and to all, a flood,
// event checks, flush IPIs and the flush filter, a counter incremented by every CPU at once.
void selftest(bool with_counter_lock);
// selftest=lock-order (two locks against the order) and lock-recursion (one lock twice): the
// checker must panic.
void lock_order_selftest(bool recursion);
}  // namespace cross_cpu
