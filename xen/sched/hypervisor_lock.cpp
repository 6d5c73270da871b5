#include "sched/hypervisor_lock.h"
#include "arch/x86/cpu/per_cpu.h"
#include "arch/x86/cpu/spinlock.h"
#include "arch/x86/platform/cross_cpu.h"

namespace hypervisor_lock {
namespace {
constexpr lock_order::LockClass lock_class{"hypervisor", lock_order::Level::hypervisor};
// The CPU holding it plus one, 0 when free: the lock word and its owner in one, so no moment
// exists where the lock is taken but nobody is named its holder. Atomics only.
unsigned holder = 0;
// How deep the holder nests; written only by the holder.
unsigned depth = 0;
// How many CPUs wait in take(), and the CPU (plus one) that last let go while some waited.
unsigned waiting = 0;
unsigned let_go_to_waiters = 0;

// Test and test-and-set, not a ticket: the CPUs here are threads of the host (TCG, or a
// hypervisor's vCPUs), which the host may stop at any moment. A ticket lock hands the lock to
// one waiter in particular; while the host is not running that waiter's thread every other CPU
// waits too (lock-waiter preemption: on a loaded two-core host running four CPUs, hand-overs
// slowed to the host's time slices and guests missed their deadlines). Here whichever waiter
// runs takes it. Unfair, it could be taken back again and again by a CPU in a loop of
// hypercalls, each free moment too short for the waiters to see: so a CPU that let it go while
// others waited lets one of them have it first (polite_wait), for a bounded while (its thread
// may be the one the host does not run). Under -icount, where TCG runs the CPUs round robin and
// each `pause` passes the turn on, that is one turn of each waiter.
bool try_take(unsigned cpu) {
  unsigned free = 0;
  return __atomic_load_n(&holder, __ATOMIC_RELAXED) == 0 &&
         __atomic_compare_exchange_n(&holder, &free, cpu + 1, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

void polite_wait(unsigned cpu) {
  constexpr unsigned at_most = 256;
  for (unsigned i = 0; i < at_most; ++i) {
    const unsigned now = __atomic_load_n(&holder, __ATOMIC_RELAXED);
    if ((now != 0 && now != cpu + 1) || __atomic_load_n(&waiting, __ATOMIC_RELAXED) == 0) return;
    cross_cpu::poll();
    asm volatile("pause" ::: "memory");
  }
}

void take(unsigned cpu) {
  spinlock::check_acquire(&holder, lock_class);
  if (__atomic_load_n(&let_go_to_waiters, __ATOMIC_RELAXED) == cpu + 1) [[unlikely]]
    polite_wait(cpu);
  if (try_take(cpu)) return;
  __atomic_fetch_add(&waiting, 1u, __ATOMIC_RELAXED);
  do {
    cross_cpu::poll();  // the holder may wait for this CPU in a flush
    asm volatile("pause" ::: "memory");
  } while (!try_take(cpu));
  __atomic_fetch_sub(&waiting, 1u, __ATOMIC_RELAXED);
}

void give_back(unsigned cpu) {
  spinlock::check_release(&holder, lock_class);
  const bool awaited = __atomic_load_n(&waiting, __ATOMIC_RELAXED) != 0;
  __atomic_store_n(&let_go_to_waiters, awaited ? cpu + 1 : 0u, __ATOMIC_RELAXED);
  __atomic_store_n(&holder, 0u, __ATOMIC_RELEASE);
}

bool held_by(unsigned cpu) { return __atomic_load_n(&holder, __ATOMIC_RELAXED) == cpu + 1; }
}  // namespace

bool held_here() { return held_by(per_cpu::this_cpu()); }

namespace detail {
void acquire_slow() {
  const unsigned cpu = per_cpu::this_cpu();
  if (!held_by(cpu)) take(cpu);
  ++depth;
}

void release_slow() {
  const unsigned cpu = per_cpu::this_cpu();
  if (!held_by(cpu)) return;
  if (--depth == 0) give_back(cpu);
}

unsigned release_all_slow() {
  const unsigned cpu = per_cpu::this_cpu();
  if (!held_by(cpu)) return 0;
  const unsigned held = depth;
  depth = 0;
  give_back(cpu);
  return held;
}

void reacquire_slow(unsigned held) {
  take(per_cpu::this_cpu());
  depth = held;
}

void let_others_in_slow(unsigned at_least) {
  const unsigned held = release_all_slow();
  // Until a waiter took it: it may be a CPU this one waits for (wait_until_off_cpu). Bounded,
  // as a waiter's thread may not be running; the caller loops anyway.
  constexpr unsigned at_most = 4096;
  for (unsigned i = 0; i < at_most && __atomic_load_n(&holder, __ATOMIC_RELAXED) == 0; ++i) {
    if (i >= at_least && __atomic_load_n(&waiting, __ATOMIC_RELAXED) == 0) break;
    asm volatile("pause" ::: "memory");
  }
  if (held) reacquire_slow(held);
}
}  // namespace detail
}  // namespace hypervisor_lock
