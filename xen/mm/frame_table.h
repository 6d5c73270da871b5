#pragma once
#include "mm/domain_identity.h"
#include "mm/mm_locks.h"
#include "mm/page_info.h"
#include "mm/tlb_flush_clock.h"

namespace mm {

// The frames one owner holds, linked through their PageInfo (Xen's d->page_list). The list
// lives with its owner (a Domain); the frame table keeps it in step with ownership.
//   generation: which list this is (0 until its first frame: the frame table then gives it
//               one no list had before), recorded in each frame on it (PageInfo::list_generation).
//   closed:     its owner is dying and takes no new frame (Xen's is_dying in assign_pages).
//   lock:       the list's own lock (level page_list, mm_locks.h), not any frame's: taken by
//               the frame table around every change of the list and of its frames' list
//               members (assign, release, rotate), which may happen on any CPU (a frame is
//               freed where its last reference goes).
struct PageList {
  uint32_t head = kNoListFrame, tail = kNoListFrame;
  uint64_t count = 0;
  uint32_t generation = 0;
  bool closed = false;
  uint32_t lock = 0;
  bool empty() const { return __atomic_load_n(&count, __ATOMIC_ACQUIRE) == 0; }
};

// One PageInfo per machine frame plus the memory those frames live in. The storage belongs
// to the caller (the hypervisor's boot allocator, or a vector in tests).
class FrameTable {
 public:
  FrameTable(PageInfo* infos, uint64_t nr_frames, MachineMemory memory)
      : infos_(infos),
        nr_frames_(nr_frames),
        memory_(memory),
        contained_end_(nr_frames < memory.nr_frames ? nr_frames : memory.nr_frames) {}

  uint64_t size() const { return nr_frames_; }
  // Both a PageInfo and the frame's memory exist (one compare: every reference checks it).
  bool contains(uint64_t mfn) const { return mfn < contained_end_; }

  // nullptr when the frame is outside the table: callers must treat that as "no such frame".
  PageInfo* find(uint64_t mfn) { return contains(mfn) ? &infos_[mfn] : nullptr; }
  const PageInfo* find(uint64_t mfn) const { return contains(mfn) ? &infos_[mfn] : nullptr; }
  // Precondition: contains(mfn).
  PageInfo& info(uint64_t mfn) { return infos_[mfn]; }
  const PageInfo& info(uint64_t mfn) const { return infos_[mfn]; }

  const MachineMemory& memory() const { return memory_; }

  // The TLB flush clock of the CPUs that run guests: the glue ticks it at every full flush,
  // type changes consult it.
  TlbFlushClock& flush_clock() { return flush_clock_; }
  const TlbFlushClock& flush_clock() const { return flush_clock_; }

  // Ticks whenever something may have changed what a walk of some guest's page tables finds
  // other than an L1 entry: an L2-L4 entry written, a type change, a pin or unpin, a base
  // pointer or LDT operation, a ptwr mode switch. Not TLB flushes or invlpg: they change
  // no table. Caches of software walks (pte_emulation's translation cache, the decode
  // cache's code walks) are valid while it stands and their L1 entry reads the same.
  uint64_t walk_generation() const { return __atomic_load_n(&walk_generation_, __ATOMIC_ACQUIRE); }
  void walks_changed() { __atomic_fetch_add(&walk_generation_, 1, __ATOMIC_ACQ_REL); }

  // Ticks when a frame instructions were decoded from (PageInfo::decoded_code) may change:
  // it takes a type (a writable mapping, or a table a detach may make writable) or is
  // freed. The decode cache's write-protected slots are valid while it stands.
  uint64_t code_generation() const { return __atomic_load_n(&code_generation_, __ATOMIC_ACQUIRE); }
  void note_decoded_code(uint64_t mfn) { __atomic_store_n(&infos_[mfn].decoded_code, true, __ATOMIC_RELEASE); }
  void code_may_change(PageInfo& page) {
    if (!page.has_decoded_code()) return;
    __atomic_store_n(&page.decoded_code, false, __ATOMIC_RELAXED);
    __atomic_fetch_add(&code_generation_, 1, __ATOMIC_ACQ_REL);
  }

  // Marks every frame free and unowned.
  void reset();
  // Called when a frame's last general reference goes (put_page), with the owner it had and
  // whether it was on that owner's list (counted in what the owner holds; false for a frame
  // left by an earlier domain of the same id, which no domain counts): the hypervisor gives a
  // guest domain's frame back to its allocator there (Xen's free_domheap_page). Unset in the
  // unit tests unless a test installs one.
  struct ReleaseHook {
    void (*released)(uint64_t mfn, domid_t owner, bool counted) = nullptr;
  };
  void set_release_hook(ReleaseHook hook) { release_hook_ = hook; }
  void released(uint64_t mfn, domid_t owner, bool counted) const {
    if (release_hook_.released != nullptr) release_hook_.released(mfn, owner, counted);
  }

  // Where an owner's page list is: null for owners whose frames are not listed (the
  // hypervisor's, I/O memory, anything in unit tests that installs no hook). The list must
  // outlive the owner's frames (a domain is gone only once its last frame is).
  struct OwnerLists {
    PageList* (*list_of)(domid_t owner) = nullptr;
  };
  void set_owner_lists(OwnerLists lists) { owner_lists_ = lists; }

  // Hands a free frame to `owner`; the allocation holds one general ref (Xen's
  // PGC_allocated). The frame joins the owner's page list. Returns false if the frame does
  // not exist or is in use, if the owner's list is closed (a dying domain gets nothing new),
  // or if the owner is a guest domain with no list while owners are listed (no such domain:
  // nothing would ever give the frame back). The frame is the caller's alone (the allocator
  // gave it): nothing else may reach it until this returns.
  bool assign(uint64_t mfn, domid_t owner);
  // The same where the caller holds the owner's list (`list` is list_of(owner)): a domain's
  // populate hands it thousands of frames, and looking the owner up for each was a fifth of
  // what a frame cost it.
  bool assign(uint64_t mfn, domid_t owner, PageList* list);
  // The frame's last general reference went: it leaves the list it is on if that is its
  // owner's list (never another: see on_list), becomes free and unowned, and the release hook
  // is told.
  void release(uint64_t mfn);

  // Whether `mfn` is on `list` (the frame records the list's generation): what makes a frame
  // a domain's own, beyond the owner id a later domain of the same id shares.
  bool on_list(uint64_t mfn, const PageList& list) const {
    const uint32_t generation = __atomic_load_n(&list.generation, __ATOMIC_ACQUIRE);
    return generation != 0 && contains(mfn) &&
           __atomic_load_n(&infos_[mfn].list_generation, __ATOMIC_ACQUIRE) == generation;
  }
  // The list of `owner` where owners are listed (null otherwise, or for no such owner).
  const PageList* owner_list(domid_t owner) const { return list_of(owner); }
  bool owners_listed() const { return owner_lists_.list_of != nullptr; }
  // A frame owned by a guest domain while owners are listed must be on its owner's list: one
  // that is not was left behind by a domain that is gone (an orphan, which the audit reports).
  bool orphaned(uint64_t mfn) const;

  // Moves the first frame of `list` to its end and returns it: the way to visit every frame
  // of a list while visiting may free frames of it (each freed frame leaves the list, so no
  // saved successor can go stale; Xen's relinquish_memory takes the head for the same
  // reason). kNoListFrame for an empty list.
  uint64_t rotate(PageList& list);

 private:
  void link(PageList& list, uint64_t mfn);
  void unlink(PageList& list, uint64_t mfn);
  PageList* list_of(domid_t owner) const {
    return owner_lists_.list_of != nullptr ? owner_lists_.list_of(owner) : nullptr;
  }

  PageInfo* infos_;
  uint64_t nr_frames_;
  MachineMemory memory_;
  uint64_t contained_end_;  // the lesser of nr_frames_ and memory_.nr_frames
  ReleaseHook release_hook_{};
  OwnerLists owner_lists_{};
  uint32_t last_list_generation_ = 0;  // the last generation given to a list (atomic)
  TlbFlushClock flush_clock_{};
  uint64_t walk_generation_ = 0;
  uint64_t code_generation_ = 0;
};

}  // namespace mm
