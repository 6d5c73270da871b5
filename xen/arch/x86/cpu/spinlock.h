// A ticket spinlock for the hypervisor, and its place in the lock order (lock_order.h;
// docs/architecture.md, "Locks, IPIs and the flush clock"). Ticket: a CPU takes the next
// number and spins until it is served, so CPUs get the lock in the order they asked (no
// starvation under contention). Each lock names its LockClass; in builds with
// PVHV_LOCK_CHECKS (the CMake option of that name, the debug configuration: ON unless turned
// off) every lock and unlock goes through this CPU's held-lock stack, and a violation is
// reported through the function main.cpp gives at boot (a panic naming both locks). Without
// it a lock is one atomic add and a spin, an unlock one compare-and-exchange.
//
// lock()/unlock() leave interrupts alone: for a lock no interrupt handler takes. A lock an
// interrupt handler takes must be taken everywhere else with lock_irqsave(), so the handler
// cannot interrupt its own CPU's holder and spin forever. A lock held across a cross-CPU
// call (cross_cpu.h) must never be waited for with interrupts off: its holder waits for
// every target's interrupt handler.
#pragma once
#include <stdint.h>
#include "arch/x86/cpu/lock_order.h"

class SpinLock {
 public:
  constexpr explicit SpinLock(const lock_order::LockClass& klass) : klass_(&klass) {}
  SpinLock(const SpinLock&) = delete;
  SpinLock& operator=(const SpinLock&) = delete;

  void lock();
  void unlock();
  bool try_lock();
  // The same with interrupts disabled while the lock is held; the saved RFLAGS go back to
  // unlock_irqrestore.
  uint64_t lock_irqsave();
  void unlock_irqrestore(uint64_t flags);

  bool is_locked() const {
    uint32_t word = __atomic_load_n(&word_, __ATOMIC_RELAXED);
    return uint16_t(word) != uint16_t(word >> 16);
  }
  const lock_order::LockClass& lock_class() const { return *klass_; }

 private:
  // Low half: the ticket being served; high half: the next ticket to hand out.
  uint32_t word_ = 0;
  const lock_order::LockClass* klass_;
};

// Holds a lock for a scope.
class LockGuard {
 public:
  explicit LockGuard(SpinLock& lock) : lock_(lock) { lock_.lock(); }
  ~LockGuard() { lock_.unlock(); }
  LockGuard(const LockGuard&) = delete;
  LockGuard& operator=(const LockGuard&) = delete;

 private:
  SpinLock& lock_;
};

// Holds a lock for a scope with interrupts disabled, restoring them after.
class IrqLockGuard {
 public:
  explicit IrqLockGuard(SpinLock& lock) : lock_(lock), flags_(lock.lock_irqsave()) {}
  ~IrqLockGuard() { lock_.unlock_irqrestore(flags_); }
  IrqLockGuard(const IrqLockGuard&) = delete;
  IrqLockGuard& operator=(const IrqLockGuard&) = delete;

 private:
  SpinLock& lock_;
  uint64_t flags_;
};

namespace spinlock {
// What a lock-order violation does: the console's panic (set at boot). Before it is set, the
// CPU halts. `held` may be null (an unlock of a lock not held).
using ViolationReport = void (*)(unsigned cpu, lock_order::Violation violation, const lock_order::LockClass& lock,
                                 const lock_order::LockClass* held);
void set_violation_report(ViolationReport report);
// Whether this build checks the order (PVHV_LOCK_CHECKS).
bool checks_enabled();
// The same checks for a lock that is not a SpinLock (the PV MMU's frame, links and page-list
// locks, mm/mm_locks.h): before waiting for `lock`, and when it was released. Nothing without
// PVHV_LOCK_CHECKS.
void check_acquire(const void* lock, const lock_order::LockClass& klass);
void check_release(const void* lock, const lock_order::LockClass& klass);
// After a lock taken without waiting (lock_order::HeldLocks::acquired_without_waiting).
void check_acquired_without_waiting(const void* lock, const lock_order::LockClass& klass);

}  // namespace spinlock
