#include "sched/hypervisor_lock.h"
#include "arch/x86/cpu/per_cpu.h"
#include "arch/x86/cpu/spinlock.h"
#include "arch/x86/platform/cross_cpu.h"

namespace hypervisor_lock {
namespace {
constexpr lock_order::LockClass lock_class{"hypervisor", lock_order::Level::hypervisor};
// Low half: the ticket being served; high half: the next ticket. Atomics only.
uint32_t word = 0;
// Which CPU holds it (MAX_CPUS: none) and how deep; written only by the holder.
unsigned owner = MAX_CPUS;
unsigned depth = 0;

void take(unsigned cpu) {
  spinlock::check_acquire(&word, lock_class);
  const uint16_t ticket = uint16_t(__atomic_fetch_add(&word, 1u << 16, __ATOMIC_ACQUIRE) >> 16);
  while (uint16_t(__atomic_load_n(&word, __ATOMIC_ACQUIRE)) != ticket) {
    cross_cpu::poll();  // the holder may wait for this CPU in a flush
    asm volatile("pause" ::: "memory");
  }
  __atomic_store_n(&owner, cpu, __ATOMIC_RELAXED);
}

void give_back() {
  __atomic_store_n(&owner, unsigned(MAX_CPUS), __ATOMIC_RELAXED);
  spinlock::check_release(&word, lock_class);
  // Only the holder changes the low half: serve the next ticket.
  uint32_t current = __atomic_load_n(&word, __ATOMIC_RELAXED), next;
  do {
    next = (current & 0xffff0000u) | uint16_t(current + 1);
  } while (!__atomic_compare_exchange_n(&word, &current, next, false, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
}
}  // namespace

bool held_here() { return __atomic_load_n(&owner, __ATOMIC_RELAXED) == per_cpu::this_cpu(); }

namespace detail {
void acquire_slow() {
  const unsigned cpu = per_cpu::this_cpu();
  if (__atomic_load_n(&owner, __ATOMIC_RELAXED) != cpu) take(cpu);
  ++depth;
}

void release_slow() {
  if (__atomic_load_n(&owner, __ATOMIC_RELAXED) != per_cpu::this_cpu()) return;
  if (--depth == 0) give_back();
}

unsigned release_all_slow() {
  if (__atomic_load_n(&owner, __ATOMIC_RELAXED) != per_cpu::this_cpu()) return 0;
  const unsigned held = depth;
  depth = 0;
  give_back();
  return held;
}

void reacquire_slow(unsigned held) {
  take(per_cpu::this_cpu());
  depth = held;
}
}  // namespace detail
}  // namespace hypervisor_lock
