// The lock-order checker's pure part (arch/x86/cpu/lock_order.h): a CPU's held-lock stack and
// the rule that levels only rise along it.
#include <gtest/gtest.h>

#include "arch/x86/cpu/lock_order.h"

namespace {
using lock_order::HeldLocks;
using lock_order::Level;
using lock_order::LockClass;
using lock_order::Violation;

constexpr LockClass domain_class{"domain", Level::domain};
constexpr LockClass frame_class{"page-table frame", Level::page_table_frame};
constexpr LockClass allocator_class{"allocator", Level::frame_allocator};
constexpr LockClass console_class{"console", Level::console};
int domain_lock, frame_lock_a, frame_lock_b, allocator_lock, console_lock;

TEST(LockOrder, RisingLevelsAreAllowedAndReleasedInReverse) {
  HeldLocks held;
  EXPECT_TRUE(held.acquire(&domain_lock, domain_class).ok());
  EXPECT_TRUE(held.acquire(&frame_lock_a, frame_class).ok());
  EXPECT_TRUE(held.acquire(&allocator_lock, allocator_class).ok());
  EXPECT_TRUE(held.acquire(&console_lock, console_class).ok());
  EXPECT_EQ(held.depth(), 4u);
  EXPECT_TRUE(held.release(&console_lock).ok());
  EXPECT_TRUE(held.release(&allocator_lock).ok());
  EXPECT_TRUE(held.release(&frame_lock_a).ok());
  EXPECT_TRUE(held.release(&domain_lock).ok());
  EXPECT_EQ(held.depth(), 0u);
  // Skipping levels is fine.
  EXPECT_TRUE(held.acquire(&domain_lock, domain_class).ok());
  EXPECT_TRUE(held.acquire(&console_lock, console_class).ok());
}

TEST(LockOrder, AnInversionIsCaughtNamingTheHeldLock) {
  HeldLocks held;
  ASSERT_TRUE(held.acquire(&allocator_lock, allocator_class).ok());
  auto verdict = held.acquire(&domain_lock, domain_class);
  EXPECT_EQ(verdict.violation, Violation::order);
  ASSERT_NE(verdict.held, nullptr);
  EXPECT_STREQ(verdict.held->name, "allocator");
  EXPECT_EQ(held.depth(), 1u);  // refused: not pushed
  EXPECT_FALSE(held.holds(&domain_lock));
  // The check is against the highest held lock, however deep.
  HeldLocks deep;
  ASSERT_TRUE(deep.acquire(&domain_lock, domain_class).ok());
  ASSERT_TRUE(deep.acquire(&allocator_lock, allocator_class).ok());
  EXPECT_EQ(deep.acquire(&frame_lock_a, frame_class).held, &allocator_class);
}

TEST(LockOrder, TwoLocksOfOneLevelAreAnInversion) {
  // Two frames' locks: no order between them, so one CPU may hold one at a time.
  HeldLocks held;
  ASSERT_TRUE(held.acquire(&frame_lock_a, frame_class).ok());
  EXPECT_EQ(held.acquire(&frame_lock_b, frame_class).violation, Violation::order);
}

// A lock taken without waiting (a try) cannot close a cycle: one of the level already held is
// allowed, then a wait for a lock of that level is still an inversion, and a try of a lower
// level is refused (the stack's levels would fall).
TEST(LockOrder, ALockOfTheHeldLevelTakenWithoutWaitingIsAllowed) {
  HeldLocks held;
  ASSERT_TRUE(held.acquire(&frame_lock_a, frame_class).ok());
  EXPECT_TRUE(held.acquired_without_waiting(&frame_lock_b, frame_class).ok());
  EXPECT_EQ(held.depth(), 2u);
  EXPECT_EQ(held.acquired_without_waiting(&frame_lock_b, frame_class).violation, Violation::recursion);
  EXPECT_EQ(held.acquired_without_waiting(&domain_lock, domain_class).violation, Violation::order);
  EXPECT_EQ(held.acquire(&domain_lock, frame_class).violation, Violation::order);
  EXPECT_TRUE(held.acquire(&allocator_lock, allocator_class).ok());
  EXPECT_TRUE(held.release(&allocator_lock).ok());
  EXPECT_TRUE(held.release(&frame_lock_b).ok());
  EXPECT_TRUE(held.release(&frame_lock_a).ok());
  EXPECT_EQ(held.depth(), 0u);
}

TEST(LockOrder, RecursionOnANonRecursiveLockIsCaught) {
  HeldLocks held;
  ASSERT_TRUE(held.acquire(&domain_lock, domain_class).ok());
  ASSERT_TRUE(held.acquire(&frame_lock_a, frame_class).ok());
  auto verdict = held.acquire(&domain_lock, domain_class);
  EXPECT_EQ(verdict.violation, Violation::recursion);
  EXPECT_EQ(verdict.held, &domain_class);
  EXPECT_EQ(held.depth(), 2u);
}

TEST(LockOrder, RecursionOnTheLastLockTakenIsCaughtToo) {
  // The lock on top: taking it again would also fail the order (its level is not above its
  // own), but the checker names it as what it is.
  HeldLocks held;
  ASSERT_TRUE(held.acquire(&domain_lock, domain_class).ok());
  auto verdict = held.acquire(&domain_lock, domain_class);
  EXPECT_EQ(verdict.violation, Violation::recursion);
  EXPECT_EQ(verdict.held, &domain_class);
  EXPECT_EQ(held.depth(), 1u);
  // Released once, it is free: taking it again is fine.
  ASSERT_TRUE(held.release(&domain_lock).ok());
  EXPECT_TRUE(held.acquire(&domain_lock, domain_class).ok());
}

TEST(LockOrder, ARefusedLockLeavesTheStackAsItWas) {
  HeldLocks held;
  ASSERT_TRUE(held.acquire(&frame_lock_a, frame_class).ok());
  ASSERT_FALSE(held.acquire(&domain_lock, domain_class).ok());
  ASSERT_FALSE(held.acquire(&frame_lock_a, frame_class).ok());
  ASSERT_FALSE(held.release(&domain_lock).ok());
  EXPECT_EQ(held.depth(), 1u);
  EXPECT_TRUE(held.holds(&frame_lock_a));
  EXPECT_TRUE(held.acquire(&allocator_lock, allocator_class).ok());
  EXPECT_TRUE(held.release(&allocator_lock).ok());
  EXPECT_TRUE(held.release(&frame_lock_a).ok());
  EXPECT_EQ(held.depth(), 0u);
}

TEST(LockOrder, UnlockOutOfOrderIsCaught) {
  HeldLocks held;
  ASSERT_TRUE(held.acquire(&domain_lock, domain_class).ok());
  ASSERT_TRUE(held.acquire(&frame_lock_a, frame_class).ok());
  auto verdict = held.release(&domain_lock);
  EXPECT_EQ(verdict.violation, Violation::unlock_order);
  EXPECT_EQ(verdict.held, &frame_class);  // the lock still held that was taken after it
  EXPECT_EQ(held.depth(), 2u);
}

TEST(LockOrder, UnlockOfALockNotHeldIsCaught) {
  HeldLocks held;
  EXPECT_EQ(held.release(&domain_lock).violation, Violation::unlock_not_held);
  ASSERT_TRUE(held.acquire(&domain_lock, domain_class).ok());
  ASSERT_TRUE(held.release(&domain_lock).ok());
  EXPECT_EQ(held.release(&domain_lock).violation, Violation::unlock_not_held);
}

TEST(LockOrder, TheStackHasALimit) {
  HeldLocks held;
  static LockClass classes[HeldLocks::capacity + 1];
  static int locks[HeldLocks::capacity + 1];
  for (unsigned i = 0; i <= HeldLocks::capacity; ++i) classes[i] = LockClass{"many", Level(i + 1)};
  for (unsigned i = 0; i < HeldLocks::capacity; ++i) ASSERT_TRUE(held.acquire(&locks[i], classes[i]).ok());
  auto verdict = held.acquire(&locks[HeldLocks::capacity], classes[HeldLocks::capacity]);
  EXPECT_EQ(verdict.violation, Violation::too_deep);
  EXPECT_EQ(verdict.held, &classes[HeldLocks::capacity - 1]);
  EXPECT_EQ(held.depth(), HeldLocks::capacity);
  // One released, one more fits again.
  ASSERT_TRUE(held.release(&locks[HeldLocks::capacity - 1]).ok());
  EXPECT_TRUE(held.acquire(&locks[HeldLocks::capacity], classes[HeldLocks::capacity]).ok());
}

TEST(LockOrder, EveryLevelAndViolationHasAName) {
  for (Level level : {Level::domain, Level::page_table_frame, Level::frame_allocator, Level::run_queue,
                      Level::cross_cpu_call, Level::console, Level::selftest})
    EXPECT_STRNE(lock_order::level_name(level), "?");
  EXPECT_STREQ(lock_order::describe(Violation::order), "lock order violated");
}
}  // namespace
