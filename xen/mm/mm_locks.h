// The PV MMU's locks, how a CPU waits for one, and how their order is checked (xen/mm/README.md,
// "Locking"; docs/architecture.md, "Locks, IPIs and the flush clock"). Pure: the hypervisor
// gives its hooks at boot (its per-CPU held-lock stacks, and a wait that answers cross-CPU
// calls), the host unit tests theirs (a held-lock stack per thread).
//
// The locks, by level (arch/x86/cpu/lock_order.h):
//   page_table_frame  one frame's lock, a bit in its type word (page_refs.h: lock_table): held
//                     around one table's entry update and the emulation of a write to it;
//                     a CPU waits for one only while it holds none (a second is taken only
//                     by a try: mmu_update's HeldTables).
//   table_links       a frame's links lock (PageInfo::links_lock): a leaf, held for a few
//                     stores to the table's TableLinks.
//   page_list         an owner's page list (PageList::lock): linking and unlinking its frames.
//   frame_allocator   the hypervisor's allocator (not here).
// A frame lock may be held while a frame is freed (its list lock, then the allocator), never
// the other way round. Waits that are not locks: a CPU that needs a type reference of a frame
// another CPU is validating or tearing down waits for it (get_page_type); that wait only ever
// goes down the table levels (README.md, "Locking"), so it cannot close a cycle.
#pragma once
#include <stdint.h>
#include "arch/x86/cpu/lock_order.h"

namespace mm {

inline constexpr lock_order::LockClass kFrameLockClass{"page-table frame", lock_order::Level::page_table_frame};
inline constexpr lock_order::LockClass kLinksLockClass{"table links", lock_order::Level::table_links};
inline constexpr lock_order::LockClass kPageListLockClass{"page list", lock_order::Level::page_list};

// What the MMU's locks call out to. Every member may be null: no order check, and a wait that
// only pauses.
struct LockHooks {
  // Before a CPU waits for `lock` (so a deadlock is reported, not entered) and when it released it.
  void (*acquire)(const void* lock, const lock_order::LockClass& klass) = nullptr;
  void (*release)(const void* lock, const lock_order::LockClass& klass) = nullptr;
  // One turn of any wait: a lock held elsewhere, or another CPU's validation of a frame. The
  // hypervisor runs with interrupts off, so its waits answer a cross-CPU call addressed to this
  // CPU (the holder may be flushing this CPU's TLB: a type change under a frame lock).
  void (*relax)() = nullptr;
  // After a lock taken by one attempt that did not wait (a second frame lock, page_refs.h's
  // try_lock_any_table): a try cannot deadlock, so it may be of the level already held.
  void (*acquired_without_waiting)(const void* lock, const lock_order::LockClass& klass) = nullptr;
};
void set_lock_hooks(const LockHooks& hooks);

namespace detail {
extern LockHooks lock_hooks;
}  // namespace detail

// The order checks are made in every host unit-test run and in hypervisors built with
// PVHV_MMU_LOCK_CHECKS (the PV MMU's debug configuration, xen/CMakeLists.txt); otherwise a lock
// is its atomic operation alone. These locks are on every guest page-table write, where the
// two calls into the held-lock stack cost about a sixth of an emulated write.
#if defined(PVHV_MMU_LOCK_CHECKS) || defined(HOST_TEST)
inline constexpr bool kLockChecks = true;
#else
inline constexpr bool kLockChecks = false;
#endif

inline void lock_acquiring(const void* lock, const lock_order::LockClass& klass) {
  if constexpr (kLockChecks)
    if (detail::lock_hooks.acquire != nullptr) detail::lock_hooks.acquire(lock, klass);
}
inline void lock_acquired_without_waiting(const void* lock, const lock_order::LockClass& klass) {
  if constexpr (kLockChecks)
    if (detail::lock_hooks.acquired_without_waiting != nullptr)
      detail::lock_hooks.acquired_without_waiting(lock, klass);
}
inline void lock_released(const void* lock, const lock_order::LockClass& klass) {
  if constexpr (kLockChecks)
    if (detail::lock_hooks.release != nullptr) detail::lock_hooks.release(lock, klass);
}
inline void relax() {
  if (detail::lock_hooks.relax != nullptr)
    detail::lock_hooks.relax();
  else
    __builtin_ia32_pause();
}

// A test-and-set lock in one byte or word of a structure that must stay trivially copyable (a
// PageInfo, a PageList): lock and unlock are free functions on the word.
template <typename Word>
inline void lock_word(Word& word, const lock_order::LockClass& klass) {
  lock_acquiring(&word, klass);
  while (__atomic_exchange_n(&word, Word(1), __ATOMIC_ACQUIRE) != 0) {
    while (__atomic_load_n(&word, __ATOMIC_RELAXED) != 0) relax();
  }
}
template <typename Word>
inline void unlock_word(Word& word, const lock_order::LockClass& klass) {
  __atomic_store_n(&word, Word(0), __ATOMIC_RELEASE);
  lock_released(&word, klass);
}

}  // namespace mm
