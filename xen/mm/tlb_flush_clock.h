#pragma once
#include "abi/xen_abi.h"

namespace mm {

// Xen's tlbflush_clock, for the one CPU that runs guests. A frame whose type count drops to
// zero is stamped with now(): translations of its old use (a writable mapping, a page-table
// walk through it) may be in the TLB from then on, until the next full flush. Every full
// flush of ours (a CR3 load: PGE is off and there are no PCIDs, so nothing survives it) ticks
// the clock. When the frame later takes a different type, a flush is needed only if no full
// flush happened since the stamp, which is most often not the case: a fork's new tables were
// last used by an exited child's address space, torn down and switched away from long before.
//
// 64 bits: at one tick per hardware instruction it would not wrap in a century, so the
// comparison needs no wrap handling (Xen's 32-bit clock has to flush everything on wrap).
class TlbFlushClock {
 public:
  // The stamp of a frame whose translations may now be stale.
  constexpr uint64_t now() const { return now_; }
  // A full TLB flush just happened: every translation stamped before it is gone.
  constexpr void full_flush() { last_full_flush_ = ++now_; }
  // Whether translations stamped `stamp` may still be in the TLB.
  constexpr bool may_hold(uint64_t stamp) const { return stamp >= last_full_flush_; }

 private:
  // Frames start with stamp 0, before the first flush: nothing of theirs is in any TLB.
  uint64_t now_ = 1;
  uint64_t last_full_flush_ = 1;
};

}  // namespace mm
