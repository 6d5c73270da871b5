#pragma once
#include "mm/error.h"
#include "mm/mm_locks.h"
#include "mm/mmu_context.h"

namespace mm {

// Every count and type of a frame changes by compare-and-exchange on its count word or its
// type word (page_info.h), so any CPU may take and drop references at any time; README.md,
// "Counting" and "Locking", has the rules. Inline where every PTE write takes and drops some.

// General references: "this frame must stay allocated to its owner while I use it".
// Fails with -EINVAL if the frame does not exist, is free, belongs to another domain than
// `owner`, or its count would overflow. Count unchanged on failure. The owner is checked in
// the same exchange that takes the reference: a frame freed and given to another domain
// meanwhile is refused, never referenced for the wrong owner.
inline int get_page(FrameTable& frames, uint64_t mfn, domid_t owner) {
  if (!frames.contains(mfn)) return error(XEN_EINVAL);
  PageInfo& page = frames.info(mfn);
  uint64_t word = __atomic_load_n(&page.count_info, __ATOMIC_RELAXED);
  do {
    const uint32_t count = count_word::count(word);
    if (count_word::owner(word) != owner || count == 0 || count == kMaxReferences) return error(XEN_EINVAL);
  } while (!__atomic_compare_exchange_n(&page.count_info, &word, word + 1, true, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED));
  return 0;
}
// Drops one general reference. The last one frees the frame (owner becomes kNoOwner, all
// state reset) and calls the frame table's release hook; whoever drops it, on whichever CPU,
// does that alone (no one can take a reference of a zero count).
inline void put_page(FrameTable& frames, uint64_t mfn) {
  PageInfo& page = frames.info(mfn);
  uint64_t word = __atomic_load_n(&page.count_info, __ATOMIC_RELAXED);
  do {
    if (count_word::count(word) == 0) return;  // a bookkeeping bug; the audit will report it
  } while (!__atomic_compare_exchange_n(&page.count_info, &word, word - 1, true, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
  if (count_word::count(word) == 1) frames.release(mfn);
}

// Type references: "this frame must stay of this type while I rely on it". The caller must
// hold a general reference. With a zero type count the frame may change type; a page-table
// type is then validated (all its entries checked and their references taken) before the
// reference is granted. -EINVAL on type mismatch or overflow; validation errors are passed
// through. On failure every count and the frame's type are as before.
// A frame that has the type but is not `validated` is being validated or torn down by another
// CPU: this waits for that to end, then tries again (Xen does the same). The first reference
// and the wait are out of line.
int take_type_ref_slowly(MmuContext& context, uint64_t mfn, PageType type);
[[gnu::always_inline]] inline int get_page_type(MmuContext& context, uint64_t mfn, PageType type) {
  if (!context.frames.contains(mfn) || type == PageType::None) return error(XEN_EINVAL);
  PageInfo& page = context.frames.info(mfn);
  const uint64_t wanted = type_word::type_bits(type) | type_word::kValidated;
  uint64_t word = __atomic_load_n(&page.type_info, __ATOMIC_RELAXED);
  for (;;) {
    const uint32_t count = type_word::count(word);
    if ((word & (type_word::kTypeMask | type_word::kValidated)) != wanted || count == 0) [[unlikely]]
      return take_type_ref_slowly(context, mfn, type);
    if (count == kMaxReferences) return error(XEN_EINVAL);
    if (__atomic_compare_exchange_n(&page.type_info, &word, word + 1, true, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
      return 0;
  }
}
// A type reference only if the frame is a validated frame of `type` already: never a type
// change, a validation or a wait (a linear page table's target, mm/linear_tables.h). -EINVAL
// otherwise.
int get_validated_page_type(FrameTable& frames, uint64_t mfn, PageType type);

// The flush stamp of a drop (PageInfo::flush_stamp): the latest wins, whichever CPU stamps last.
[[gnu::always_inline]] inline void stamp_drop(PageInfo& page, uint64_t now) {
  uint64_t stamp = __atomic_load_n(&page.flush_stamp, __ATOMIC_RELAXED);
  while (stamp < now &&
         !__atomic_compare_exchange_n(&page.flush_stamp, &stamp, now, true, __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {
  }
}

// Drops one type reference. Dropping the last one of a validated page table releases every
// reference its entries hold (recursively) and clears `validated` (release_last_table_type,
// out of line): the dropping CPU keeps the count at one while it does, so no one can lock or
// use the table meanwhile, and a CPU that wants the same type waits for the end.
void release_last_table_type(FrameTable& frames, uint64_t mfn);
[[gnu::always_inline]] inline void put_page_type(FrameTable& frames, uint64_t mfn) {
  PageInfo& page = frames.info(mfn);
  uint64_t word = __atomic_load_n(&page.type_info, __ATOMIC_RELAXED);
  // Every drop, not only the last: update_va_mapping may take back the stamp of a drop whose
  // translation the caller invalidates at once, and the stamp must then still say when the
  // frame last lost a reference that can leave something stale behind. Before the drop: a
  // type change that sees the count at zero sees the stamp too.
  stamp_drop(page, frames.flush_clock().now());
  for (;;) {
    const uint32_t count = type_word::count(word);
    if (count == 0) return;  // a bookkeeping bug; the audit will report it
    if (count == 1 && type_word::validated(word) && is_page_table(type_word::type(word))) [[unlikely]]
      return release_last_table_type(frames, mfn);
    if (__atomic_compare_exchange_n(&page.type_info, &word, word - 1, true, __ATOMIC_RELEASE, __ATOMIC_RELAXED)) return;
  }
}

// Both, as Xen's get_page_and_type: the general ref is rolled back if the type ref fails.
int get_page_and_type(MmuContext& context, uint64_t mfn, domid_t owner, PageType type);
void put_page_and_type(FrameTable& frames, uint64_t mfn);

// Releases the reference the owner's allocation holds (domain teardown, ballooning). The
// frame is freed once the last other holder lets go. Once only, whoever calls it.
void drop_allocation(FrameTable& frames, uint64_t mfn);

// Pins: the pin flag is set and cleared by one atomic operation on the type word, so two CPUs
// pinning (or unpinning) one table cannot both succeed. set_pinned: true if this call set it
// (the caller's type reference becomes the pin's); clear_pinned: true if this call cleared it
// (the caller then drops the pin's references).
inline bool set_pinned(PageInfo& page) {
  return (__atomic_fetch_or(&page.type_info, type_word::kPinned, __ATOMIC_ACQ_REL) & type_word::kPinned) == 0;
}
inline bool clear_pinned(PageInfo& page) {
  return (__atomic_fetch_and(&page.type_info, ~type_word::kPinned, __ATOMIC_ACQ_REL) & type_word::kPinned) != 0;
}

// The frame lock (Xen's page_lock): held around one update of a validated table's entries,
// and the emulation of a guest's write to it, so that no two CPUs update one table at once
// and no table is torn down while an update is under way. A bit in the type word, taken
// together with a type reference of the lock's own: the table stays validated (its last
// reference cannot go) until the lock is given back. Only a validated table can be locked;
// validation and teardown own the frame outright instead (its one type reference held,
// `validated` clear: no lock can be taken, and every get_page_type of that type waits).
// A CPU holds at most one frame lock, and takes none while it holds a lock of a higher level
// (mm_locks.h). While it waits for another CPU's, it answers cross-CPU calls (LockHooks::relax).

// Spins (LockHooks::relax) until another CPU gives the frame's lock back: its type word then.
uint64_t wait_for_frame_lock(PageInfo& page);
// The lock's slow path: the frame locked elsewhere, or a count at its limit, or a word that
// changed under the exchange. `accepts` tells whether a type word is a validated table of the
// kind wanted; the lock is then taken as on the fast path, or false returned.
template <typename Accepts>
[[gnu::noinline]] bool lock_table_slowly(PageInfo& page, Accepts accepts) {
  uint64_t word = __atomic_load_n(&page.type_info, __ATOMIC_RELAXED);
  for (;;) {
    if (!accepts(word) || type_word::count(word) == kMaxReferences) {
      lock_released(&page, kFrameLockClass);
      return false;
    }
    if (type_word::locked(word)) {
      word = wait_for_frame_lock(page);
      continue;
    }
    if (__atomic_compare_exchange_n(&page.type_info, &word, (word + 1) | type_word::kLocked, true, __ATOMIC_ACQUIRE,
                                    __ATOMIC_RELAXED))
      return true;
  }
}
// Locks the frame if it is a validated table of `type` (a table type) of `owner` and returns
// true; false at once otherwise (a frame of another type or owner, or being validated or torn
// down, is no table of the domain's to update). One compare checks all of it (the type word's
// owner bits). A validated table has a type reference, so its count is not zero.
[[gnu::always_inline]] inline bool lock_table(PageInfo& page, PageType type, domid_t owner) {
  lock_acquiring(&page, kFrameLockClass);
  constexpr uint64_t kKind = type_word::kTypeMask | type_word::kValidated | type_word::kOwnerMask;
  const uint64_t wanted = type_word::type_bits(type) | type_word::kValidated | type_word::owner_bits(owner);
  uint64_t word = __atomic_load_n(&page.type_info, __ATOMIC_RELAXED);
  if ((word & (kKind | type_word::kLocked)) == wanted && type_word::count(word) != kMaxReferences &&
      __atomic_compare_exchange_n(&page.type_info, &word, (word + 1) | type_word::kLocked, false, __ATOMIC_ACQUIRE,
                                  __ATOMIC_RELAXED)) [[likely]]
    return true;
  return lock_table_slowly(page, [wanted](uint64_t found) { return (found & kKind) == wanted; });
}
// The same for a validated table of any level: its type, or None when the frame is none.
[[gnu::always_inline]] inline PageType lock_any_table(PageInfo& page, domid_t owner) {
  lock_acquiring(&page, kFrameLockClass);
  const uint64_t owned = type_word::kValidated | type_word::owner_bits(owner);
  const auto accepts = [owned](uint64_t found) {
    return (found & (type_word::kValidated | type_word::kOwnerMask)) == owned && is_page_table(type_word::type(found));
  };
  uint64_t word = __atomic_load_n(&page.type_info, __ATOMIC_RELAXED);
  if (accepts(word) && !type_word::locked(word) && type_word::count(word) != kMaxReferences &&
      __atomic_compare_exchange_n(&page.type_info, &word, (word + 1) | type_word::kLocked, false, __ATOMIC_ACQUIRE,
                                  __ATOMIC_RELAXED)) [[likely]]
    return type_word::type(word);
  if (!lock_table_slowly(page, accepts)) return PageType::None;
  return type_word::type(__atomic_load_n(&page.type_info, __ATOMIC_RELAXED));
}
// lock_any_table without waiting: the frame's lock if it is a validated table of `owner` that no
// one holds, in one attempt, or None (locked elsewhere, no such table, or a word that changed
// meanwhile). A CPU that holds a frame lock takes a second only so (mmu_update's HeldTables): a
// try cannot wait, so two CPUs each holding one and trying the other's cannot deadlock.
[[gnu::always_inline]] inline PageType try_lock_any_table(PageInfo& page, domid_t owner) {
  const uint64_t owned = type_word::kValidated | type_word::owner_bits(owner);
  uint64_t word = __atomic_load_n(&page.type_info, __ATOMIC_RELAXED);
  if ((word & (type_word::kValidated | type_word::kOwnerMask | type_word::kLocked)) != owned ||
      !is_page_table(type_word::type(word)) || type_word::count(word) == kMaxReferences ||
      !__atomic_compare_exchange_n(&page.type_info, &word, (word + 1) | type_word::kLocked, false, __ATOMIC_ACQUIRE,
                                   __ATOMIC_RELAXED))
    return PageType::None;
  lock_acquired_without_waiting(&page, kFrameLockClass);
  return type_word::type(word);
}
// Gives the lock of `page` (the PageInfo of `mfn`) back, with its type reference; if that was
// the table's last one, the table is torn down as by put_page_type.
void unlock_table_slowly(FrameTable& frames, uint64_t mfn);
[[gnu::always_inline]] inline void unlock_table(FrameTable& frames, uint64_t mfn, PageInfo& page) {
  uint64_t word = __atomic_load_n(&page.type_info, __ATOMIC_RELAXED);
  for (;;) {
    if (type_word::count(word) <= 1) [[unlikely]]
      return unlock_table_slowly(frames, mfn);
    if (__atomic_compare_exchange_n(&page.type_info, &word, (word - 1) & ~type_word::kLocked, true, __ATOMIC_RELEASE,
                                    __ATOMIC_RELAXED))
      break;
  }
  lock_released(&page, kFrameLockClass);
}
[[gnu::always_inline]] inline void unlock_table(FrameTable& frames, uint64_t mfn) {
  unlock_table(frames, mfn, frames.info(mfn));
}

}  // namespace mm
