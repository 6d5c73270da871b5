// The hypervisor lock: with guests on several CPUs (sched_smp=1), a CPU holds it whenever it
// runs hypervisor work for a guest (a hypercall, a trap, the timer's expiry, the scheduler) and
// releases it on the way back to the guest and while it halts idle. Guests run in parallel; the
// hypervisor's own state (domains, vCPUs, run queues, event channels, timers, the console, the
// trace buffers) is touched by one CPU at a time. It is the first step, as Linux's early
// big kernel lock was: the PV MMU below it is already safe without it (mm/README.md,
// "Locking"), and finer locks can replace it one structure at a time.
//
// Level `hypervisor` (5, below every other lock: lock_order.h). A test-and-set lock (not a
// ticket lock: see take() in the .cpp) that nests on the CPU holding it (an interrupt taken
// while the idle loop scrubs, a fault on guest memory). A CPU waiting for it answers cross-CPU
// calls meanwhile (cross_cpu::poll): its holder may be waiting in a TLB flush for this CPU,
// which runs with interrupts off. Not taken by the
// cross-CPU call and event-check handlers, whose callers may hold it.
//
// With sched_smp=0 every call here returns at once: one CPU runs guests, nothing to exclude.
#pragma once
#include <stdint.h>
#include "domain/domain.h"

namespace hypervisor_lock {
namespace detail {
void acquire_slow();
void release_slow();
unsigned release_all_slow();
void reacquire_slow(unsigned depth);
void let_others_in_slow(unsigned at_least);
}  // namespace detail

// Takes it, or nests once more on this CPU.
inline void acquire() {
  if (domains::vcpus_on_every_cpu()) [[unlikely]]
    detail::acquire_slow();
}
// Undoes one acquire().
inline void release() {
  if (domains::vcpus_on_every_cpu()) [[unlikely]]
    detail::release_slow();
}
// Frees it whatever the nesting (0 if this CPU did not hold it), for a wait that must let other
// CPUs in (the idle halt, waiting for a vCPU to leave its CPU); reacquire() restores it.
inline unsigned release_all() {
  if (domains::vcpus_on_every_cpu()) [[unlikely]]
    return detail::release_all_slow();
  return 0;
}
inline void reacquire(unsigned depth) {
  if (domains::vcpus_on_every_cpu() && depth) [[unlikely]]
    detail::reacquire_slow(depth);
}
// Lets it go and takes it back once a waiting CPU had it (or after `at_least` pauses when none
// waits, or a bound): for a CPU holding it in a loop that other CPUs' progress ends (the idle
// CPU's scrubbing, waiting for a vCPU to leave its CPU). A test-and-set lock would otherwise
// be taken back before any waiter saw it free.
inline void let_others_in(unsigned at_least = 0) {
  if (domains::vcpus_on_every_cpu()) [[unlikely]]
    detail::let_others_in_slow(at_least);
}
bool held_here();
}  // namespace hypervisor_lock
