// The lock order and its checker's pure part (docs/architecture.md, "Locks, IPIs and the
// flush clock"). Every lock has a level; a CPU may take a lock only if its level is higher
// than the level of every lock the CPU already holds, so two CPUs can never each hold what the
// other waits for; locks are released in the reverse order, and none is taken twice by its
// holder. The same idea as Xen's lock levels and Linux's lockdep, much smaller: the order is
// declared here, once, rather than learnt at run time. Each CPU keeps a stack of the locks it
// holds (HeldLocks); the spinlocks (spinlock.h) ask it before they spin and when they release,
// in builds with PVHV_LOCK_CHECKS, and a violation panics naming the locks. Unit-tested on the
// host (tests/unit/cpu_lock_order_test.cpp).
//
// A lock taken in an interrupt handler is pushed onto the stack of whatever the CPU was doing:
// it must be above every lock that can be held with interrupts enabled, which the order then
// checks for free.
#pragma once
#include <stdint.h>

namespace lock_order {

// Lowest first: a CPU holding a lock of one level may take only locks of later levels.
// "planned": no lock of that level exists yet; the scheduler will take them.
enum class Level : uint8_t {
  hypervisor = 5,   // the hypervisor lock (sched/hypervisor_lock): held by a CPU running hypervisor work for guests
  domain = 10,      // a domain's own state (planned)
  ptwr_slots = 15,  // a domain's writable-pagetable slots (domain/writable_page_tables_glue)
  page_table_frame = 20,  // one table's entries while it is updated (Xen's page_lock: mm/mm_locks.h)
  table_links = 22,       // a table's TableLinks (mm/mm_locks.h): a leaf
  page_list = 25,         // an owner's page list (mm/frame_table.h): linking and unlinking frames
  frame_allocator = 30,   // the frame allocator (planned)
  run_queue = 40,         // one CPU's run queue (planned: the hypervisor lock covers the run queues today)
  cross_cpu_call = 50,    // the cross-CPU call descriptor (arch/x86/platform/cross_cpu): exists
  console = 60,           // the console's output (planned)
  selftest = 70,          // the self-tests' locks (xen/cross_cpu_selftest.cpp) only
};
const char* level_name(Level level);

// What a lock is, for the checker: its name (in the panic text) and level. No lock may be
// taken again by the CPU that holds it (a ticket lock would wait for itself forever).
struct LockClass {
  const char* name;
  Level level;
};

enum class Violation : uint8_t {
  none,
  order,            // the lock's level is not above every held lock's
  recursion,        // a lock taken again by the CPU that holds it
  unlock_order,     // a lock released while a lock taken after it is still held
  unlock_not_held,  // a lock released that this CPU does not hold
  too_deep,         // more locks held than the stack keeps
};
const char* describe(Violation violation);

struct Verdict {
  Violation violation = Violation::none;
  const LockClass* held = nullptr;  // the held lock the violation is against (if any)
  bool ok() const { return violation == Violation::none; }
};

// One CPU's held locks, in the order taken. `lock` identifies an instance (two locks of one
// class, say two frames' locks, are two instances of one level).
class HeldLocks {
 public:
  static constexpr unsigned capacity = 16;

  // Before spinning on `lock` (and for a try_lock, which is held to the same rule though it
  // cannot deadlock): whether this CPU may take it. On success it is pushed; on a violation
  // nothing changes.
  Verdict acquire(const void* lock, const LockClass& klass) {
    for (unsigned i = 0; i < depth_; ++i)
      if (entries_[i].lock == lock) return {Violation::recursion, entries_[i].klass};
    if (depth_ > 0) {
      const Entry& top = highest();
      if (static_cast<uint8_t>(klass.level) <= static_cast<uint8_t>(top.klass->level))
        return {Violation::order, top.klass};
    }
    if (depth_ == capacity) return {Violation::too_deep, entries_[depth_ - 1].klass};
    entries_[depth_++] = Entry{lock, &klass};
    return {};
  }

  // A lock taken by one attempt that did not wait (a try): it cannot close a cycle, so a lock of
  // the level this CPU already holds is allowed (two frame locks, mm::HeldTables); a lower
  // level is not (the stack's levels would no longer rise). Recursion and depth as acquire's.
  Verdict acquired_without_waiting(const void* lock, const LockClass& klass) {
    for (unsigned i = 0; i < depth_; ++i)
      if (entries_[i].lock == lock) return {Violation::recursion, entries_[i].klass};
    if (depth_ > 0) {
      const Entry& top = highest();
      if (static_cast<uint8_t>(klass.level) < static_cast<uint8_t>(top.klass->level))
        return {Violation::order, top.klass};
    }
    if (depth_ == capacity) return {Violation::too_deep, entries_[depth_ - 1].klass};
    entries_[depth_++] = Entry{lock, &klass};
    return {};
  }

  // When a lock is released: it must be the last one taken. On success it is popped; on a
  // violation nothing changes.
  Verdict release(const void* lock) {
    for (unsigned i = depth_; i-- > 0;) {
      if (entries_[i].lock != lock) continue;
      if (i + 1 != depth_) return {Violation::unlock_order, entries_[depth_ - 1].klass};
      --depth_;
      return {};
    }
    return {Violation::unlock_not_held, nullptr};
  }

  unsigned depth() const { return depth_; }
  bool holds(const void* lock) const {
    for (unsigned i = 0; i < depth_; ++i)
      if (entries_[i].lock == lock) return true;
    return false;
  }

 private:
  struct Entry {
    const void* lock;
    const LockClass* klass;
  };
  // Levels never fall along the stack, so the last entry is the highest.
  const Entry& highest() const { return entries_[depth_ - 1]; }

  Entry entries_[capacity] = {};
  unsigned depth_ = 0;
};

inline const char* level_name(Level level) {
  switch (level) {
    case Level::hypervisor: return "hypervisor";
    case Level::domain: return "domain";
    case Level::ptwr_slots: return "writable-pagetable slots";
    case Level::page_table_frame: return "page-table frame";
    case Level::table_links: return "table links";
    case Level::page_list: return "page list";
    case Level::frame_allocator: return "frame allocator";
    case Level::run_queue: return "run queue";
    case Level::cross_cpu_call: return "cross-CPU call";
    case Level::console: return "console";
    case Level::selftest: return "selftest";
  }
  return "?";
}

inline const char* describe(Violation violation) {
  switch (violation) {
    case Violation::none: return "no violation";
    case Violation::order: return "lock order violated";
    case Violation::recursion: return "lock taken again by the CPU holding it";
    case Violation::unlock_order: return "lock released out of order";
    case Violation::unlock_not_held: return "lock released but not held";
    case Violation::too_deep: return "too many locks held";
  }
  return "?";
}

}  // namespace lock_order
