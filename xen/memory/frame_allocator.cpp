#include "memory/frame_allocator.h"

namespace boot {

const char* describe(FrameAllocatorError error) {
  switch (error) {
    case FrameAllocatorError::none: return "no error";
    case FrameAllocatorError::storage_too_small: return "frame allocator storage too small";
    case FrameAllocatorError::frame_out_of_range: return "frame beyond the managed range";
    case FrameAllocatorError::frame_not_usable: return "frame is reserved or not RAM";
    case FrameAllocatorError::frame_already_free: return "frame is already free";
    case FrameAllocatorError::bad_arguments: return "bad frame allocator arguments";
    case FrameAllocatorError::out_of_memory: return "out of free frames";
  }
  return "unknown frame allocator error";
}

namespace {

constexpr bool is_power_of_two(uint64_t value) { return value != 0 && (value & (value - 1)) == 0; }

// Rounds up without wrapping; saturates at the largest aligned value.
constexpr uint64_t align_up(uint64_t value, uint64_t alignment) {
  uint64_t rounded = (value + alignment - 1) & ~(alignment - 1);
  return rounded < value ? ~(alignment - 1) : rounded;
}

constexpr uint64_t first_frame_inside(const PhysicalRange& range) {
  return align_up(range.start, frame_size) >> frame_shift;
}
constexpr uint64_t end_frame_inside(const PhysicalRange& range) { return range.end >> frame_shift; }

constexpr uint64_t first_frame_touching(const PhysicalRange& range) { return range.start >> frame_shift; }
constexpr uint64_t end_frame_touching(const PhysicalRange& range) {
  return (range.end >> frame_shift) + ((range.end & (frame_size - 1)) != 0 ? 1 : 0);
}

// The reserved range overlapping [start, start + bytes), or nullptr.
const PhysicalRange* blocking_range(const PhysicalRange* reserved, size_t count, uint64_t start, uint64_t bytes) {
  PhysicalRange candidate{start, start + bytes};
  for (size_t i = 0; i < count; ++i)
    if (reserved[i].overlaps(candidate)) return &reserved[i];
  return nullptr;
}

bool find_in_range(const PhysicalRange& ram, const PhysicalRange* reserved, size_t reserved_count, uint64_t bytes,
                   uint64_t alignment, PhysicalRange& found) {
  uint64_t candidate = align_up(ram.start, alignment);
  while (candidate >= ram.start && candidate < ram.end && ram.end - candidate >= bytes) {
    const PhysicalRange* blocker = blocking_range(reserved, reserved_count, candidate, bytes);
    if (!blocker) {
      found = {candidate, candidate + bytes};
      return true;
    }
    uint64_t next = align_up(blocker->end, alignment);
    if (next <= candidate) return false;
    candidate = next;
  }
  return false;
}

}  // namespace

bool find_free_region(const PhysicalRange* ram, size_t ram_count, const PhysicalRange* reserved, size_t reserved_count,
                      uint64_t bytes, uint64_t alignment, PhysicalRange& found) {
  if (bytes == 0 || !is_power_of_two(alignment)) return false;
  for (size_t i = 0; i < ram_count; ++i)
    if (!ram[i].empty() && find_in_range(ram[i], reserved, reserved_count, bytes, alignment, found)) return true;
  return false;
}

FrameAllocatorError FrameAllocator::init(uint64_t* storage, size_t storage_words, uint64_t frame_limit,
                                         const PhysicalRange* ram, size_t ram_count, const PhysicalRange* reserved,
                                         size_t reserved_count) {
  if (!storage || frame_limit == 0 || frame_limit > (uint64_t(1) << 52)) return FrameAllocatorError::bad_arguments;
  if (storage_words < storage_words_for(frame_limit)) return FrameAllocatorError::storage_too_small;
  *this = FrameAllocator{};
  words_ = size_t((frame_limit + 63) / 64);
  usable_ = storage;
  free_ = storage + words_;
  clean_ = storage + 2 * words_;
  frame_limit_ = frame_limit;
  for (size_t i = 0; i < 3 * words_; ++i) storage[i] = 0;
  for (size_t i = 0; i < ram_count; ++i) add_ram(ram[i]);
  for (size_t i = 0; i < reserved_count; ++i) reserve(reserved[i]);
  return FrameAllocatorError::none;
}

void FrameAllocator::add_ram(const PhysicalRange& range) {
  if (range.empty()) return;
  uint64_t first = first_frame_inside(range), end = end_frame_inside(range);
  for (uint64_t frame = first; frame < end; ++frame) {
    if (frame >= frame_limit_) {
      ignored_frames_ += end - frame;
      return;
    }
    if (test(usable_, frame)) continue;  // overlapping RAM entries count once
    set(usable_, frame);
    set(free_, frame);
    ++usable_count_;
    ++free_count_;
  }
}

void FrameAllocator::reserve(const PhysicalRange& range) {
  if (range.empty()) return;
  uint64_t end = end_frame_touching(range);
  if (end > frame_limit_) end = frame_limit_;
  for (uint64_t frame = first_frame_touching(range); frame < end; ++frame) {
    if (!test(usable_, frame)) continue;
    clear(usable_, frame);
    --usable_count_;
    if (test(free_, frame)) {
      clear(free_, frame);
      --free_count_;
    }
    clear(clean_, frame);
  }
}

// Whoever takes a frame writes it: it stops being clean here, zeroed first if `zero` asks for
// zeros and it was not clean.
void FrameAllocator::take(uint64_t frame, ZeroFrame zero) {
  clear(free_, frame);
  --free_count_;
  if (test(clean_, frame)) {
    clear(clean_, frame);
  } else if (zero) {
    zero(frame);
  }
}

FrameAllocatorError FrameAllocator::take_lowest(uint64_t& frame, ZeroFrame zero) {
  for (size_t word = search_hint_; word < words_; ++word) {
    if (free_[word] == 0) continue;
    search_hint_ = word;
    frame = uint64_t(word) * 64 + uint64_t(__builtin_ctzll(free_[word]));
    take(frame, zero);
    return FrameAllocatorError::none;
  }
  search_hint_ = words_;
  return FrameAllocatorError::out_of_memory;
}

FrameAllocatorError FrameAllocator::allocate(uint64_t& frame) { return take_lowest(frame, nullptr); }
FrameAllocatorError FrameAllocator::allocate_zeroed(uint64_t& frame, ZeroFrame zero) {
  return take_lowest(frame, zero);
}

// The last frame in [first, first + count) that is not free, or first + count if all are.
uint64_t FrameAllocator::first_blocker(uint64_t first, uint64_t count) const {
  for (uint64_t frame = first + count; frame > first; --frame)
    if (!test(free_, frame - 1)) return frame - 1;
  return first + count;
}

FrameAllocatorError FrameAllocator::allocate_contiguous(uint64_t count, uint64_t alignment, uint64_t& first) {
  return take_run(count, alignment, first, nullptr);
}
FrameAllocatorError FrameAllocator::allocate_contiguous_zeroed(uint64_t count, uint64_t alignment, uint64_t& first,
                                                               ZeroFrame zero) {
  return take_run(count, alignment, first, zero);
}

FrameAllocatorError FrameAllocator::take_run(uint64_t count, uint64_t alignment, uint64_t& first, ZeroFrame zero) {
  if (count == 0 || !is_power_of_two(alignment)) return FrameAllocatorError::bad_arguments;
  if (count > free_count_) return FrameAllocatorError::out_of_memory;
  // A run of one frame is the lowest free frame: found a word at a time, where the scan below
  // tests the frames before it one by one (a domain's pages are populated one at a time).
  if (count == 1 && alignment == 1) return take_lowest(first, zero);
  uint64_t candidate = align_up(uint64_t(search_hint_) * 64, alignment);
  while (candidate < frame_limit_ && frame_limit_ - candidate >= count) {
    uint64_t blocker = first_blocker(candidate, count);
    if (blocker == candidate + count) {
      for (uint64_t frame = candidate; frame < candidate + count; ++frame) take(frame, zero);
      first = candidate;
      return FrameAllocatorError::none;
    }
    // Scanning from the end lets us skip past the whole blocked prefix at once.
    uint64_t next = align_up(blocker + 1, alignment);
    if (next <= candidate) break;
    candidate = next;
  }
  return FrameAllocatorError::out_of_memory;
}

FrameAllocatorError FrameAllocator::free(uint64_t frame) {
  if (frame >= frame_limit_) return FrameAllocatorError::frame_out_of_range;
  if (!test(usable_, frame)) return FrameAllocatorError::frame_not_usable;
  if (test(free_, frame)) return FrameAllocatorError::frame_already_free;
  set(free_, frame);
  ++free_count_;
  if (frame / 64 < search_hint_) search_hint_ = size_t(frame / 64);
  if (frame / 64 < scrub_hint_) scrub_hint_ = size_t(frame / 64);
  return FrameAllocatorError::none;
}

bool FrameAllocator::scrub_one(ZeroFrame zero) {
  for (size_t word = scrub_hint_; word < words_; ++word) {
    const uint64_t unknown = free_[word] & ~clean_[word];
    if (unknown == 0) continue;
    scrub_hint_ = word;
    const uint64_t frame = uint64_t(word) * 64 + uint64_t(__builtin_ctzll(unknown));
    zero(frame);
    set(clean_, frame);
    return true;
  }
  scrub_hint_ = words_;
  return false;
}

FrameAllocatorError FrameAllocator::free_contiguous(uint64_t first, uint64_t count) {
  // Check the whole run first, so an error leaves the allocator unchanged.
  if (first >= frame_limit_ || count > frame_limit_ - first) return FrameAllocatorError::frame_out_of_range;
  for (uint64_t frame = first; frame < first + count; ++frame) {
    if (!test(usable_, frame)) return FrameAllocatorError::frame_not_usable;
    if (test(free_, frame)) return FrameAllocatorError::frame_already_free;
  }
  for (uint64_t frame = first; frame < first + count; ++frame) free(frame);
  return FrameAllocatorError::none;
}

bool FrameAllocator::is_free(uint64_t frame) const { return frame < frame_limit_ && test(free_, frame); }

uint64_t FrameAllocator::clean_count() const {
  uint64_t count = 0;
  for (size_t word = 0; word < words_; ++word)
    for (uint64_t bits = clean_[word]; bits != 0; bits &= bits - 1) ++count;  // no libgcc popcount here
  return count;
}

bool FrameAllocator::is_clean(uint64_t frame) const { return frame < frame_limit_ && test(clean_, frame); }

bool FrameAllocator::is_allocated(uint64_t frame) const {
  return frame < frame_limit_ && test(usable_, frame) && !test(free_, frame);
}

}  // namespace boot
