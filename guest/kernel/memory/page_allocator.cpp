#include "kernel/memory/page_allocator.h"

#include "kernel/console/panic.h"
#include "kernel/memory/physical_memory.h"

namespace kernel {

PageAllocator page_allocator;

void PageAllocator::init(lib::Pfn first_free, uint64_t frame_count) {
  end_ = frame_count < kMaxFrames ? frame_count : kMaxFrames;
  for (uint64_t pfn = 0; pfn < end_; ++pfn) {
    bool used = pfn < first_free.value;
    if (used)
      used_[pfn / 64] |= 1ull << (pfn % 64);
    else
      ++free_count_;
  }
  hint_ = first_free.value;
}

bool PageAllocator::allocate(lib::Pfn& pfn) {
  for (uint64_t candidate = hint_; candidate < end_; ++candidate) {
    if (!is_used(candidate)) {
      used_[candidate / 64] |= 1ull << (candidate % 64);
      --free_count_;
      references_[candidate] = 1;
      hint_ = candidate + 1;
      pfn = lib::Pfn{candidate};
      return true;
    }
  }
  return false;
}

// A free of a frame that is free (or beyond the pool), or that the builder placed (below the
// first free one: no count, never freed here), is a kernel bug.
void PageAllocator::refuse_free(lib::Pfn pfn) const {
  if (pfn.value >= end_ || !is_used(pfn.value)) panic("freeing free frame %lx", pfn.value);
  panic("freeing unowned frame %lx", pfn.value);
}

void PageAllocator::refuse_share(lib::Pfn pfn) const {
  if (pfn.value >= end_ || references_[pfn.value] == 0) panic("sharing free frame %lx", pfn.value);
  panic("too many references to frame %lx", pfn.value);
}

void PageAllocator::release(lib::Pfn pfn) {
  used_[pfn.value / 64] &= ~(1ull << (pfn.value % 64));
  ++free_count_;
  if (pfn.value < hint_) hint_ = pfn.value;
}

lib::Pfn allocate_zeroed_frame() {
  lib::Pfn pfn;
  if (!page_allocator.allocate(pfn)) panic("out of memory");
  __builtin_memset(pfn_pointer<void>(pfn), 0, lib::kPageSize);
  return pfn;
}

}  // namespace kernel
