#include "pv/rules/guest_page_walk.h"
#include <gtest/gtest.h>
#include <cstdlib>
#include <memory>

namespace {
constexpr uint64_t present = 1, writable = 2, user = 4, superpage = 0x80;
constexpr uint64_t kFrames = 16, kL4 = 1, kL3 = 2, kL2 = 3, kL1 = 4, kData = 5;
constexpr uint64_t kVa = 0x0000123456789000ULL;  // some user address

unsigned index_at(uint64_t va, int level) { return (va >> (12 + 9 * (level - 1))) & 511; }

class GuestPageWalk : public ::testing::Test {
 protected:
  void SetUp() override {
    storage_.reset(static_cast<uint8_t*>(std::aligned_alloc(4096, kFrames * 4096)));
    std::fill_n(storage_.get(), kFrames * 4096, 0);
    memory_ = mm::MachineMemory{storage_.get(), kFrames};
    link(kL4, 4, kL3, present | writable | user);
    link(kL3, 3, kL2, present | writable | user);
    link(kL2, 2, kL1, present | writable | user);
    link(kL1, 1, kData, present | writable | user);
  }
  uint64_t& entry(uint64_t table, int level) {
    return reinterpret_cast<uint64_t*>(memory_.frame(table))[index_at(kVa, level)];
  }
  void link(uint64_t table, int level, uint64_t target, uint64_t flags) { entry(table, level) = target << 12 | flags; }

  struct Free {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  std::unique_ptr<uint8_t, Free> storage_;
  mm::MachineMemory memory_{};
};
}  // namespace

TEST_F(GuestPageWalk, FindsTheFrameAndTheL1Entry) {
  GuestWalk walk = walk_guest(memory_, kL4, kVa + 0x123, true);
  ASSERT_TRUE(walk.ok);
  EXPECT_EQ(walk.mfn, kData);
  EXPECT_EQ(walk.l1_entry_maddr, (kL1 << 12) + index_at(kVa, 1) * 8);
}

TEST_F(GuestPageWalk, RefusesWhatRing3CouldNotDo) {
  entry(kL1, 1) &= ~writable;
  EXPECT_TRUE(walk_guest(memory_, kL4, kVa, false).ok);
  EXPECT_FALSE(walk_guest(memory_, kL4, kVa, true).ok) << "write through a read-only PTE";
  entry(kL3, 3) &= ~user;
  EXPECT_FALSE(walk_guest(memory_, kL4, kVa, false).ok) << "supervisor-only directory";
}

TEST_F(GuestPageWalk, RefusesNotPresentSuperpagesAndBadAddresses) {
  entry(kL2, 2) |= superpage;
  EXPECT_FALSE(walk_guest(memory_, kL4, kVa, false).ok);
  entry(kL2, 2) &= ~superpage;
  entry(kL1, 1) &= ~present;
  EXPECT_FALSE(walk_guest(memory_, kL4, kVa, false).ok);
  EXPECT_FALSE(walk_guest(memory_, kL4, 0x0000800000000000ULL, false).ok) << "non-canonical";
  EXPECT_FALSE(walk_guest(memory_, kFrames + 3, kVa, false).ok) << "L4 outside memory";
  entry(kL1, 1) = (kFrames + 100) << 12 | present | user;
  EXPECT_FALSE(walk_guest(memory_, kL4, kVa, false).ok) << "target outside memory";
}
