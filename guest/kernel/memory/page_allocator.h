#pragma once
// Allocator of pseudo-physical frames: every frame from the end of the builder's bootstrap
// region up to nr_pages (capped to what the direct map covers). One bit per frame, and a
// reference count per frame: a user page shared copy-on-write after fork is mapped by
// several processes and returns to the free pool when the last mapping goes.
#include <stddef.h>
#include <stdint.h>

#include "lib/page_table_entry.h"

namespace kernel {

class PageAllocator {
 public:
  static constexpr uint64_t kMaxFrames = 1ull << 18;  // 1 GiB: the direct map's limit

  void init(lib::Pfn first_free, uint64_t frame_count);
  // Lowest free frame, or false when memory is exhausted. The frame's contents are
  // undefined; callers zero what they need.
  // The frame comes with one reference.
  bool allocate(lib::Pfn& pfn);
  // Drops one reference; the frame is free when none is left. Inline, as share: a fork and an
  // exit call them once per page mapped, and most calls only count.
  void free(lib::Pfn pfn) {
    if (pfn.value >= end_ || references_[pfn.value] == 0) [[unlikely]]
      refuse_free(pfn);
    if (--references_[pfn.value] == 0) release(pfn);
  }
  void share(lib::Pfn pfn) {  // one more reference
    if (pfn.value >= end_ || references_[pfn.value] - 1u >= 0xfffeu) [[unlikely]]
      refuse_share(pfn);
    ++references_[pfn.value];
  }
  unsigned references(lib::Pfn pfn) const { return references_[pfn.value]; }
  uint64_t free_count() const { return free_count_; }
  uint64_t end() const { return end_; }

 private:
  bool is_used(uint64_t pfn) const { return used_[pfn / 64] >> (pfn % 64) & 1; }
  [[noreturn, gnu::cold]] void refuse_free(lib::Pfn pfn) const;
  [[noreturn, gnu::cold]] void refuse_share(lib::Pfn pfn) const;
  void release(lib::Pfn pfn);  // the last reference went: the frame is free
  uint64_t used_[kMaxFrames / 64];
  uint16_t references_[kMaxFrames];
  uint64_t end_ = 0;
  uint64_t hint_ = 0;
  uint64_t free_count_ = 0;
};

extern PageAllocator page_allocator;

// Allocates a frame and zeroes it through the direct map; panics when memory is exhausted.
lib::Pfn allocate_zeroed_frame();

}  // namespace kernel
