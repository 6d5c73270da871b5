#include "arch/x86/cpu/spinlock.h"
#include "arch/x86/cpu/per_cpu.h"
#include "arch/x86/cpu/registers.h"
#include "arch/x86/layout.h"

namespace spinlock {
namespace {
ViolationReport violation_report = nullptr;
#ifdef PVHV_LOCK_CHECKS
lock_order::HeldLocks held[MAX_CPUS];

void check(lock_order::Verdict verdict, const lock_order::LockClass& lock, unsigned cpu) {
  if (verdict.ok()) [[likely]]
    return;
  if (violation_report) violation_report(cpu, verdict.violation, lock, verdict.held);
  cpu::halt_forever();
}

// This CPU's held-lock stack is changed with interrupts off: a handler that takes and releases
// a lock in between would otherwise see (and leave) a half-pushed entry.
void check_acquire_of(const void* lock, const lock_order::LockClass& klass) {
  uint64_t flags = cpu::save_and_disable_interrupts();
  unsigned cpu = per_cpu::this_cpu();
  check(held[cpu].acquire(lock, klass), klass, cpu);
  cpu::restore_interrupts(flags);
}
void check_acquired_without_waiting_of(const void* lock, const lock_order::LockClass& klass) {
  uint64_t flags = cpu::save_and_disable_interrupts();
  unsigned cpu = per_cpu::this_cpu();
  check(held[cpu].acquired_without_waiting(lock, klass), klass, cpu);
  cpu::restore_interrupts(flags);
}
void check_release_of(const void* lock, const lock_order::LockClass& klass) {
  uint64_t flags = cpu::save_and_disable_interrupts();
  unsigned cpu = per_cpu::this_cpu();
  check(held[cpu].release(lock), klass, cpu);
  cpu::restore_interrupts(flags);
}
#endif
}  // namespace

void check_acquire([[maybe_unused]] const void* lock, [[maybe_unused]] const lock_order::LockClass& klass) {
#ifdef PVHV_LOCK_CHECKS
  check_acquire_of(lock, klass);
#endif
}
void check_acquired_without_waiting([[maybe_unused]] const void* lock,
                                    [[maybe_unused]] const lock_order::LockClass& klass) {
#ifdef PVHV_LOCK_CHECKS
  check_acquired_without_waiting_of(lock, klass);
#endif
}
void check_release([[maybe_unused]] const void* lock, [[maybe_unused]] const lock_order::LockClass& klass) {
#ifdef PVHV_LOCK_CHECKS
  check_release_of(lock, klass);
#endif
}

void set_violation_report(ViolationReport report) { violation_report = report; }

bool checks_enabled() {
#ifdef PVHV_LOCK_CHECKS
  return true;
#else
  return false;
#endif
}
}  // namespace spinlock

void SpinLock::lock() {
#ifdef PVHV_LOCK_CHECKS
  spinlock::check_acquire_of(this, *klass_);  // before spinning: a deadlock would never return
#endif
  uint32_t ticket = __atomic_fetch_add(&word_, 1u << 16, __ATOMIC_ACQUIRE) >> 16;
  while (uint16_t(__atomic_load_n(&word_, __ATOMIC_ACQUIRE)) != uint16_t(ticket)) asm volatile("pause");
}

bool SpinLock::try_lock() {
  uint32_t word = __atomic_load_n(&word_, __ATOMIC_RELAXED);
  if (uint16_t(word) != uint16_t(word >> 16)) return false;
  if (!__atomic_compare_exchange_n(&word_, &word, word + (1u << 16), false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
    return false;
#ifdef PVHV_LOCK_CHECKS
  spinlock::check_acquire_of(this, *klass_);  // a try cannot deadlock, but the order holds for it too
#endif
  return true;
}

void SpinLock::unlock() {
#ifdef PVHV_LOCK_CHECKS
  spinlock::check_release_of(this, *klass_);
#endif
  // Serve the next ticket: a 16-bit add in the low half (wrapping without carrying into the
  // high half, which other CPUs may be incrementing meanwhile).
  uint32_t word = __atomic_load_n(&word_, __ATOMIC_RELAXED);
  while (!__atomic_compare_exchange_n(&word_, &word, (word & 0xffff0000u) | uint16_t(word + 1), true, __ATOMIC_RELEASE,
                                      __ATOMIC_RELAXED)) {
  }
}

uint64_t SpinLock::lock_irqsave() {
  uint64_t flags = cpu::save_and_disable_interrupts();
  lock();
  return flags;
}

void SpinLock::unlock_irqrestore(uint64_t flags) {
  unlock();
  cpu::restore_interrupts(flags);
}
