#pragma once
// The boot-time physical frame allocator: which 4 KiB frames of RAM are free. It has no heap,
// so it keeps three bitmaps in memory the caller provides: `usable` (RAM that is not reserved),
// `free` (usable and not handed out) and `clean` (free and known to hold zeros). Keeping
// `usable` apart is what lets free() refuse a frame that was never the allocator's to give (the
// hypervisor image, a module, a hole). `clean` is what lets the hypervisor scrub the frames
// domains gave back while it is idle, as Xen does (scrub_free_pages), so that allocation finds
// them zeroed: a frame is clean from the moment scrub_one zeroed it until it is taken, and
// unknown again when it is freed; at init every frame is unknown (RAM as the firmware left it).

#include <stddef.h>
#include <stdint.h>

namespace boot {

constexpr uint64_t frame_shift = 12;
constexpr uint64_t frame_size = uint64_t(1) << frame_shift;

// A physical byte range [start, end).
struct PhysicalRange {
  uint64_t start = 0;
  uint64_t end = 0;
  constexpr bool empty() const { return end <= start; }
  constexpr bool overlaps(const PhysicalRange& other) const {
    return !empty() && !other.empty() && start < other.end && other.start < end;
  }
};

enum class FrameAllocatorError : uint8_t {
  none,
  storage_too_small,
  frame_out_of_range,
  frame_not_usable,
  frame_already_free,
  bad_arguments,
  out_of_memory,
};

const char* describe(FrameAllocatorError error);

// Finds `bytes` bytes aligned to `alignment` (a power of two) inside some RAM range and clear
// of every reserved range: where to put the allocator's own bitmaps or the frame table before
// any allocator exists. Returns false if nothing fits.
bool find_free_region(const PhysicalRange* ram, size_t ram_count, const PhysicalRange* reserved, size_t reserved_count,
                      uint64_t bytes, uint64_t alignment, PhysicalRange& found);

class FrameAllocator {
 public:
  // 64-bit words the caller must provide to manage frames [0, frame_limit).
  static constexpr size_t storage_words_for(uint64_t frame_limit) { return 3 * size_t((frame_limit + 63) / 64); }

  // Frames wholly inside a RAM range become free, then every frame touching a reserved range
  // is taken out. RAM beyond frame_limit is ignored (the count is in ignored_frames()).
  FrameAllocatorError init(uint64_t* storage, size_t storage_words, uint64_t frame_limit, const PhysicalRange* ram,
                           size_t ram_count, const PhysicalRange* reserved, size_t reserved_count);

  // Lowest free frame.
  FrameAllocatorError allocate(uint64_t& frame);
  // Lowest run of `count` free frames starting at a multiple of `alignment` frames.
  FrameAllocatorError allocate_contiguous(uint64_t count, uint64_t alignment, uint64_t& first);
  // The same for a caller that hands the frames out zeroed: `zero` is called for each frame
  // taken that is not clean, before it returns.
  using ZeroFrame = void (*)(uint64_t frame);
  FrameAllocatorError allocate_zeroed(uint64_t& frame, ZeroFrame zero);
  FrameAllocatorError allocate_contiguous_zeroed(uint64_t count, uint64_t alignment, uint64_t& first, ZeroFrame zero);
  // Zeroes (`zero`) the lowest free frame that is not clean and marks it clean: false, and
  // nothing done, when every free frame is clean.
  bool scrub_one(ZeroFrame zero);
  // Returns an allocated frame. Refuses frames outside RAM, reserved, or already free.
  FrameAllocatorError free(uint64_t frame);
  FrameAllocatorError free_contiguous(uint64_t first, uint64_t count);
  // Takes a range out of service after init (e.g. a late-discovered firmware table).
  void reserve(const PhysicalRange& range);

  constexpr uint64_t free_count() const { return free_count_; }
  constexpr uint64_t usable_count() const { return usable_count_; }
  constexpr uint64_t frame_limit() const { return frame_limit_; }
  constexpr uint64_t ignored_frames() const { return ignored_frames_; }
  // Counted from the bitmap when asked (the tests and the invariant ask; no path keeps it).
  uint64_t clean_count() const;
  bool is_free(uint64_t frame) const;
  bool is_clean(uint64_t frame) const;
  bool is_allocated(uint64_t frame) const;

 private:
  static constexpr bool test(const uint64_t* bits, uint64_t frame) { return (bits[frame / 64] >> (frame % 64)) & 1; }
  static constexpr void set(uint64_t* bits, uint64_t frame) { bits[frame / 64] |= uint64_t(1) << (frame % 64); }
  static constexpr void clear(uint64_t* bits, uint64_t frame) { bits[frame / 64] &= ~(uint64_t(1) << (frame % 64)); }
  void add_ram(const PhysicalRange& range);
  void take(uint64_t frame, ZeroFrame zero);
  FrameAllocatorError take_lowest(uint64_t& frame, ZeroFrame zero);
  FrameAllocatorError take_run(uint64_t count, uint64_t alignment, uint64_t& first, ZeroFrame zero);
  uint64_t first_blocker(uint64_t first, uint64_t count) const;

  uint64_t* usable_ = nullptr;
  uint64_t* free_ = nullptr;
  uint64_t* clean_ = nullptr;
  size_t words_ = 0;
  uint64_t frame_limit_ = 0;
  uint64_t free_count_ = 0;
  uint64_t usable_count_ = 0;
  uint64_t ignored_frames_ = 0;
  size_t search_hint_ = 0;  // no free frame lives in a word below this index
  size_t scrub_hint_ = 0;   // nor a free frame that is not clean below this one
};

}  // namespace boot
