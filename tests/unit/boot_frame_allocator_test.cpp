#include <gtest/gtest.h>

#include <random>
#include <set>
#include <vector>

#include "memory/frame_allocator.h"

using namespace boot;

namespace {

constexpr uint64_t MiB = 1ull << 20;

struct Fixture {
  std::vector<uint64_t> storage;
  FrameAllocator allocator;

  FrameAllocatorError init(uint64_t frame_limit, std::vector<PhysicalRange> ram, std::vector<PhysicalRange> reserved) {
    storage.assign(FrameAllocator::storage_words_for(frame_limit), ~0ull);
    return allocator.init(storage.data(), storage.size(), frame_limit, ram.data(), ram.size(), reserved.data(),
                          reserved.size());
  }
};

}  // namespace

TEST(BootFrameAllocator, CountsOnlyWholeRamFramesOutsideReservations) {
  Fixture f;
  // RAM: [0, 640K) and [1M, 16M + 100 bytes); the partial last frame is not usable.
  ASSERT_EQ(f.init(8192, {{0, 640 * 1024}, {MiB, 16 * MiB + 100}},
                   {{0, 4096}, {MiB, 2 * MiB + 1}}),  // frame 0 and the "hypervisor image"
            FrameAllocatorError::none);
  uint64_t expected = 160 - 1 + (3840 - 257);
  EXPECT_EQ(f.allocator.free_count(), expected);
  EXPECT_EQ(f.allocator.usable_count(), expected);
  EXPECT_FALSE(f.allocator.is_free(0));
  EXPECT_TRUE(f.allocator.is_free(1));
  EXPECT_FALSE(f.allocator.is_free(160));  // the VGA hole
  EXPECT_FALSE(f.allocator.is_free(512));  // reserved, touched by the +1 byte
  EXPECT_TRUE(f.allocator.is_free(514));
  EXPECT_FALSE(f.allocator.is_free(4096));  // the partial frame at 16 MiB
}

TEST(BootFrameAllocator, AllocatesLowestFirstAndNeverTwice) {
  Fixture f;
  ASSERT_EQ(f.init(1024, {{0, 4 * MiB}}, {{0, 8192}}), FrameAllocatorError::none);
  std::set<uint64_t> seen;
  uint64_t frame = 0;
  while (f.allocator.allocate(frame) == FrameAllocatorError::none) {
    EXPECT_TRUE(seen.insert(frame).second) << frame;
    EXPECT_GE(frame, 2u);
    EXPECT_TRUE(f.allocator.is_allocated(frame));
  }
  EXPECT_EQ(seen.size(), 1022u);
  EXPECT_EQ(*seen.begin(), 2u);
  EXPECT_EQ(f.allocator.free_count(), 0u);
  EXPECT_EQ(f.allocator.allocate(frame), FrameAllocatorError::out_of_memory);
}

TEST(BootFrameAllocator, FreeRejectsForeignAndDoubleFrees) {
  Fixture f;
  ASSERT_EQ(f.init(1024, {{0, 2 * MiB}}, {{MiB, MiB + 4096}}), FrameAllocatorError::none);
  uint64_t frame = 0;
  ASSERT_EQ(f.allocator.allocate(frame), FrameAllocatorError::none);
  EXPECT_EQ(f.allocator.free(frame), FrameAllocatorError::none);
  EXPECT_EQ(f.allocator.free(frame), FrameAllocatorError::frame_already_free);
  EXPECT_EQ(f.allocator.free(256), FrameAllocatorError::frame_not_usable);  // reserved
  EXPECT_EQ(f.allocator.free(600), FrameAllocatorError::frame_not_usable);  // not RAM
  EXPECT_EQ(f.allocator.free(5000), FrameAllocatorError::frame_out_of_range);
  EXPECT_EQ(f.allocator.free_count(), 511u);
}

TEST(BootFrameAllocator, ContiguousRunsRespectAlignmentAndHoles) {
  Fixture f;
  ASSERT_EQ(f.init(4096, {{0, 16 * MiB}}, {{0, 4096}, {3 * MiB, 3 * MiB + 4096}}), FrameAllocatorError::none);
  uint64_t first = 0;
  ASSERT_EQ(f.allocator.allocate_contiguous(512, 512, first), FrameAllocatorError::none);
  // [0, 2M) holds reserved frame 0 and [2M, 4M) the reserved frame at 3M.
  EXPECT_EQ(first, 1024u);
  ASSERT_EQ(f.allocator.allocate_contiguous(512, 512, first), FrameAllocatorError::none);
  EXPECT_EQ(first, 1536u);
  ASSERT_EQ(f.allocator.allocate_contiguous(3, 1, first), FrameAllocatorError::none);
  EXPECT_EQ(first, 1u);
  for (uint64_t frame = 1; frame < 4; ++frame) EXPECT_TRUE(f.allocator.is_allocated(frame));
  EXPECT_EQ(f.allocator.allocate_contiguous(4096, 1, first), FrameAllocatorError::out_of_memory);
  EXPECT_EQ(f.allocator.allocate_contiguous(0, 1, first), FrameAllocatorError::bad_arguments);
  EXPECT_EQ(f.allocator.allocate_contiguous(1, 3, first), FrameAllocatorError::bad_arguments);

  uint64_t before = f.allocator.free_count();
  EXPECT_EQ(f.allocator.free_contiguous(2040, 10), FrameAllocatorError::frame_already_free);
  EXPECT_EQ(f.allocator.free_contiguous(0, 2), FrameAllocatorError::frame_not_usable);
  EXPECT_EQ(f.allocator.free_count(), before);  // nothing changed on error
  EXPECT_EQ(f.allocator.free_contiguous(1536, 512), FrameAllocatorError::none);
  EXPECT_EQ(f.allocator.free_count(), before + 512);
}

TEST(BootFrameAllocator, LateReservationAndLimits) {
  Fixture f;
  ASSERT_EQ(f.init(256, {{0, 2 * MiB}}, {}), FrameAllocatorError::none);
  EXPECT_EQ(f.allocator.usable_count(), 256u);
  EXPECT_EQ(f.allocator.ignored_frames(), 256u);  // RAM beyond the managed limit
  f.allocator.reserve({0, 10 * 4096});
  EXPECT_EQ(f.allocator.free_count(), 246u);
  uint64_t frame = 0;
  ASSERT_EQ(f.allocator.allocate(frame), FrameAllocatorError::none);
  EXPECT_EQ(frame, 10u);

  std::vector<uint64_t> small(1);
  FrameAllocator allocator;
  PhysicalRange ram{0, MiB};
  EXPECT_EQ(allocator.init(small.data(), small.size(), 256, &ram, 1, nullptr, 0),
            FrameAllocatorError::storage_too_small);
  EXPECT_EQ(allocator.init(nullptr, 0, 256, &ram, 1, nullptr, 0), FrameAllocatorError::bad_arguments);
}

TEST(BootFrameAllocator, RandomisedNeverDoubleAllocates) {
  Fixture f;
  ASSERT_EQ(f.init(2048, {{4096, 3 * MiB}, {4 * MiB, 8 * MiB}}, {{5 * MiB, 5 * MiB + 12345}}),
            FrameAllocatorError::none);
  std::mt19937 random(42);
  std::set<uint64_t> held;
  uint64_t usable = f.allocator.usable_count();
  for (int step = 0; step < 20000; ++step) {
    int action = random() % 3;
    if (action == 0 && !held.empty()) {
      auto it = held.begin();
      std::advance(it, random() % held.size());
      ASSERT_EQ(f.allocator.free(*it), FrameAllocatorError::none);
      held.erase(it);
    } else if (action == 1) {
      uint64_t count = 1 + random() % 20, first = 0;
      if (f.allocator.allocate_contiguous(count, 1u << (random() % 4), first) == FrameAllocatorError::none) {
        for (uint64_t frame = first; frame < first + count; ++frame) {
          ASSERT_TRUE(held.insert(frame).second) << frame;
        }
      }
    } else {
      uint64_t frame = 0;
      if (f.allocator.allocate(frame) == FrameAllocatorError::none) {
        ASSERT_TRUE(held.insert(frame).second) << frame;
      }
    }
    ASSERT_EQ(f.allocator.free_count() + held.size(), usable);
  }
  for (uint64_t frame : held) {
    EXPECT_FALSE(frame >= 1280 && frame < 1284) << "reserved frame handed out";
    EXPECT_FALSE(frame == 0 || (frame >= 768 && frame < 1024)) << "non-RAM frame handed out";
  }
}

TEST(BootFrameAllocator, FindsRegionForItsOwnBitmap) {
  std::vector<PhysicalRange> ram{{0, 640 * 1024}, {MiB, 64 * MiB}};
  std::vector<PhysicalRange> reserved{{0, 4096}, {MiB, 3 * MiB}, {3 * MiB + 4096, 4 * MiB}};
  PhysicalRange found;
  ASSERT_TRUE(find_free_region(ram.data(), ram.size(), reserved.data(), reserved.size(), 700 * 1024, 4096, found));
  EXPECT_EQ(found.start, 4 * MiB);  // too big for low memory and the gap at 3M
  ASSERT_TRUE(find_free_region(ram.data(), ram.size(), reserved.data(), reserved.size(), 4096, 4096, found));
  EXPECT_EQ(found.start, 4096u);
  EXPECT_FALSE(find_free_region(ram.data(), ram.size(), reserved.data(), reserved.size(), 100 * MiB, 4096, found));
  EXPECT_FALSE(find_free_region(ram.data(), ram.size(), reserved.data(), reserved.size(), 4096, 3000, found));
}

// Idle scrubbing: what the allocator knows about a free frame's contents. A test's "memory" is
// which frames the zeroing callback was called for, and in what order.
namespace {
std::vector<uint64_t> zeroed;
void record_zero(uint64_t frame) { zeroed.push_back(frame); }

struct ScrubFixture : Fixture {
  ScrubFixture() {
    zeroed.clear();
    EXPECT_EQ(init(256, {{0, 256 * 4096}}, {{0, 4096}}), FrameAllocatorError::none);
  }
};
}  // namespace

TEST(BootFrameAllocatorScrub, AtFirstNoFrameIsCleanSoAllocationZeroes) {
  ScrubFixture f;
  EXPECT_EQ(f.allocator.clean_count(), 0u);
  uint64_t frame = 0;
  ASSERT_EQ(f.allocator.allocate_zeroed(frame, record_zero), FrameAllocatorError::none);
  EXPECT_EQ(frame, 1u);
  EXPECT_EQ(zeroed, std::vector<uint64_t>{1});
}

TEST(BootFrameAllocatorScrub, ScrubbedFramesAreHandedOutWithoutZeroingAgain) {
  ScrubFixture f;
  ASSERT_TRUE(f.allocator.scrub_one(record_zero));
  ASSERT_TRUE(f.allocator.scrub_one(record_zero));
  EXPECT_EQ(zeroed, (std::vector<uint64_t>{1, 2}));
  EXPECT_TRUE(f.allocator.is_clean(1));
  EXPECT_EQ(f.allocator.clean_count(), 2u);
  zeroed.clear();
  uint64_t first = 0;
  ASSERT_EQ(f.allocator.allocate_contiguous_zeroed(4, 1, first, record_zero), FrameAllocatorError::none);
  EXPECT_EQ(first, 1u);
  EXPECT_EQ(zeroed, (std::vector<uint64_t>{3, 4})) << "only the run's frames that were not scrubbed";
  EXPECT_FALSE(f.allocator.is_clean(1)) << "a frame taken is its new owner's to write";
  EXPECT_EQ(f.allocator.clean_count(), 0u);
}

// The frame a scrub made clean, taken, written and freed again holds its last owner's data:
// it must be zeroed again, by the scrubber or by the next allocation.
TEST(BootFrameAllocatorScrub, AFrameFreedAgainIsNoLongerClean) {
  ScrubFixture f;
  ASSERT_TRUE(f.allocator.scrub_one(record_zero));
  uint64_t frame = 0;
  ASSERT_EQ(f.allocator.allocate(frame), FrameAllocatorError::none) << "a caller that writes it itself";
  EXPECT_EQ(frame, 1u);
  ASSERT_EQ(f.allocator.free(frame), FrameAllocatorError::none);
  EXPECT_FALSE(f.allocator.is_clean(frame));
  zeroed.clear();
  ASSERT_EQ(f.allocator.allocate_zeroed(frame, record_zero), FrameAllocatorError::none);
  EXPECT_EQ(zeroed, std::vector<uint64_t>{1});
  ASSERT_EQ(f.allocator.free(frame), FrameAllocatorError::none);
  zeroed.clear();
  ASSERT_TRUE(f.allocator.scrub_one(record_zero));
  EXPECT_EQ(zeroed, std::vector<uint64_t>{1}) << "the scrubber goes back for a frame freed below where it was";
}

TEST(BootFrameAllocatorScrub, ScrubbingSkipsTakenAndCleanFramesAndEnds) {
  ScrubFixture f;
  uint64_t first = 0;
  ASSERT_EQ(f.allocator.allocate_contiguous(100, 1, first), FrameAllocatorError::none);
  std::vector<uint64_t> expected;
  for (uint64_t frame = 101; frame < 256; ++frame) expected.push_back(frame);
  while (f.allocator.scrub_one(record_zero)) {
  }
  EXPECT_EQ(zeroed, expected) << "every free frame once, no taken one";
  EXPECT_EQ(f.allocator.clean_count(), f.allocator.free_count());
  zeroed.clear();
  EXPECT_FALSE(f.allocator.scrub_one(record_zero));
  EXPECT_TRUE(zeroed.empty());
  ASSERT_EQ(f.allocator.free(50), FrameAllocatorError::none);
  ASSERT_TRUE(f.allocator.scrub_one(record_zero));
  EXPECT_EQ(zeroed, std::vector<uint64_t>{50});
}

TEST(BootFrameAllocatorScrub, AReservedFrameIsNeitherFreeNorClean) {
  ScrubFixture f;
  while (f.allocator.scrub_one(record_zero)) {
  }
  f.allocator.reserve({10 * 4096, 12 * 4096});
  EXPECT_FALSE(f.allocator.is_clean(10));
  EXPECT_FALSE(f.allocator.is_clean(11));
  EXPECT_EQ(f.allocator.clean_count(), f.allocator.free_count());
}

// Random takes, frees and scrubs: a frame handed out zeroed was either zeroed at allocation or
// scrubbed since it was last freed, never both and never neither.
TEST(BootFrameAllocatorScrub, EveryFrameHandedOutZeroedIsZeroedExactlyOnceSinceItWasFreed) {
  ScrubFixture f;
  std::mt19937 random(7);
  std::vector<int> zeroed_since_free(256, 0);
  std::set<uint64_t> held;
  for (int step = 0; step < 5000; ++step) {
    zeroed.clear();
    switch (random() % 3) {
      case 0: {
        uint64_t frame = 0;
        if (f.allocator.allocate_zeroed(frame, record_zero) != FrameAllocatorError::none) break;
        for (uint64_t z : zeroed) ++zeroed_since_free[z];
        ASSERT_EQ(zeroed_since_free[frame], 1) << frame;
        held.insert(frame);
        break;
      }
      case 1:
        if (held.empty()) break;
        {
          auto it = std::next(held.begin(), random() % held.size());
          ASSERT_EQ(f.allocator.free(*it), FrameAllocatorError::none);
          zeroed_since_free[*it] = 0;
          held.erase(it);
        }
        break;
      default:
        f.allocator.scrub_one(record_zero);
        for (uint64_t z : zeroed) {
          ASSERT_FALSE(held.count(z)) << "scrubbed a frame in use: " << z;
          ++zeroed_since_free[z];
        }
    }
  }
}
