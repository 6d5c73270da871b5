#include "emulate/translation_cache.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>

#include "mm/entry_update.h"
#include "mm_test_fixture.h"

namespace {
using pte_emulation::Translation;
using pte_emulation::TranslationCache;
using pte_emulation::TranslationKey;
using pte_emulation::WalkGeneration;

constexpr uint64_t kFrames = 8, kMappingL1 = 3, kTable = 5, kOtherTable = 6;
constexpr unsigned kSlot = 17;
constexpr uint64_t kEntry = kTable << 12 | 0x5;  // present, user, read-only

class TranslationCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    storage_.reset(static_cast<uint8_t*>(std::aligned_alloc(4096, kFrames * 4096)));
    std::fill_n(storage_.get(), kFrames * 4096, 0);
    memory_ = mm::MachineMemory{storage_.get(), kFrames};
    slot() = kEntry;
    cache_.remember(key_, now_, found_, memory_);
  }
  uint64_t& slot() { return reinterpret_cast<uint64_t*>(memory_.frame(kMappingL1))[kSlot]; }

  struct Free {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  std::unique_ptr<uint8_t, Free> storage_;
  mm::MachineMemory memory_{};
  TranslationCache cache_;
  const TranslationKey key_{1, 2, 0x123456};
  const WalkGeneration now_{7};
  const Translation found_{kTable, (kMappingL1 << 12) + kSlot * 8};
};

TEST_F(TranslationCacheTest, ServesWhatTheWalkFoundWhileNothingChanged) {
  const Translation* hit = cache_.find(key_, now_, memory_);
  ASSERT_NE(hit, nullptr);
  EXPECT_EQ(hit->target_mfn, kTable);
  EXPECT_EQ(hit->mapping_entry_maddr, found_.mapping_entry_maddr);
}

TEST_F(TranslationCacheTest, MissesAnotherPageAddressSpaceOrDomain) {
  EXPECT_EQ(cache_.find({1, 2, 0x123457}, now_, memory_), nullptr) << "another page";
  EXPECT_EQ(cache_.find({1, 3, 0x123456}, now_, memory_), nullptr) << "another L4 (a CR3 load)";
  EXPECT_EQ(cache_.find({4, 2, 0x123456}, now_, memory_), nullptr) << "another domain";
}

TEST_F(TranslationCacheTest, MissesOnceTheGenerationMoved) {
  EXPECT_EQ(cache_.find(key_, {8}, memory_), nullptr) << "an upper-level entry, a type change, a pin...";
}

TEST_F(TranslationCacheTest, MissesWhenTheMappingL1EntryChanged) {
  slot() = kOtherTable << 12 | 0x5;  // remapped through an alias, nothing ticked
  EXPECT_EQ(cache_.find(key_, now_, memory_), nullptr);
  slot() = kEntry | 0x2;  // made writable (a detach)
  EXPECT_EQ(cache_.find(key_, now_, memory_), nullptr);
  slot() = 0;
  EXPECT_EQ(cache_.find(key_, now_, memory_), nullptr);
  slot() = kEntry;
  EXPECT_NE(cache_.find(key_, now_, memory_), nullptr) << "the same entry again: the walk would find the same";
}

TEST_F(TranslationCacheTest, IgnoresAccessedAndDirtyBits) {
  slot() = kEntry | 0x20 | 0x40;
  EXPECT_NE(cache_.find(key_, now_, memory_), nullptr);
}

TEST_F(TranslationCacheTest, ClearForgetsAndAnEntryOutsideMemoryIsNeverKept) {
  cache_.clear();
  EXPECT_EQ(cache_.find(key_, now_, memory_), nullptr);
  cache_.remember(key_, now_, {kTable, (kFrames + 1) << 12}, memory_);
  EXPECT_EQ(cache_.find(key_, now_, memory_), nullptr);
}

// A fork writes the child's table and the parent's in turn: both stay cached, each checked
// against its own mapping entry.
TEST_F(TranslationCacheTest, KeepsSeveralPagesEachWithItsOwnEntry) {
  constexpr unsigned kOtherSlot = 18;
  const TranslationKey other{1, 2, 0x123999};
  reinterpret_cast<uint64_t*>(memory_.frame(kMappingL1))[kOtherSlot] = kOtherTable << 12 | 0x5;
  cache_.remember(other, now_, {kOtherTable, (kMappingL1 << 12) + kOtherSlot * 8}, memory_);
  for (int round = 0; round < 3; ++round) {
    const Translation* first = cache_.find(key_, now_, memory_);
    const Translation* second = cache_.find(other, now_, memory_);
    ASSERT_NE(first, nullptr);
    ASSERT_NE(second, nullptr);
    EXPECT_EQ(first->target_mfn, kTable);
    EXPECT_EQ(second->target_mfn, kOtherTable);
  }
  slot() = 0;  // only the first page's mapping changed
  EXPECT_EQ(cache_.find(key_, now_, memory_), nullptr);
  EXPECT_NE(cache_.find(other, now_, memory_), nullptr);
}

TEST_F(TranslationCacheTest, ReplacesInTurnAndNeverHoldsAKeyTwice) {
  // A failed remember of a cached key must not leave its old translation behind.
  cache_.remember(key_, now_, {kOtherTable, (kFrames + 1) << 12}, memory_);
  EXPECT_EQ(cache_.find(key_, now_, memory_), nullptr);
  cache_.remember(key_, now_, found_, memory_);
  ASSERT_NE(cache_.find(key_, now_, memory_), nullptr);
  // kEntries other pages later the first one has been replaced.
  for (uint64_t page = 1; page <= TranslationCache::kEntries; ++page)
    cache_.remember({1, 2, 0x200000 + page}, now_, found_, memory_);
  EXPECT_EQ(cache_.find(key_, now_, memory_), nullptr);
  EXPECT_NE(cache_.find({1, 2, 0x200000 + TranslationCache::kEntries}, now_, memory_), nullptr);
}

// What ticks FrameTable::walk_generation(): the mm side of the invalidation rules.
class WalkGenerationTicks : public mm::testing::MmuTest {};

TEST_F(WalkGenerationTicks, UpperLevelWritesTypeChangesAndMmuextOpsTickIt) {
  using namespace mm::testing;
  build_tree();
  uint64_t before = frames_.walk_generation();
  ASSERT_EQ(pin(kL4, MMUEXT_PIN_L4_TABLE), 0);
  EXPECT_GT(frames_.walk_generation(), before) << "a pin";
  mm::MmuContext ctx = context();
  before = frames_.walk_generation();
  ASSERT_EQ(mm::update_table_entry(ctx, kL1, 7, ro(kData + 7), false), 0);
  EXPECT_EQ(frames_.walk_generation(), before) << "an L1 write is checked by value instead";
  ASSERT_EQ(mm::update_table_entry(ctx, kL2, 0, E{}, false), 0);
  EXPECT_GT(frames_.walk_generation(), before) << "an L2 write";
  before = frames_.walk_generation();
  // The cached walks are of the tables in memory: TLB operations change none of it, and a
  // demand-paging storm (fault, write, invlpg, fault on the next page) must keep hitting.
  for (unsigned command : {MMUEXT_INVLPG_LOCAL, MMUEXT_TLB_FLUSH_LOCAL, MMUEXT_INVLPG_ALL, MMUEXT_TLB_FLUSH_ALL}) {
    mmuext_op_t op{};
    op.cmd = command;
    ASSERT_EQ(mm::mmuext_op(ctx, bases_, op), 0);
    EXPECT_EQ(frames_.walk_generation(), before) << "TLB operation " << command;
  }
  mmuext_op_t unpin{};
  unpin.cmd = MMUEXT_UNPIN_TABLE;
  unpin.arg1.mfn = kL4;
  ASSERT_EQ(mm::mmuext_op(ctx, bases_, unpin), 0);
  EXPECT_GT(frames_.walk_generation(), before) << "an unpin";
  before = frames_.walk_generation();
  // kLooseData was never typed: a first type is no change; Writable -> L1 is.
  ASSERT_EQ(mm::get_page_and_type(ctx, kLooseData, kGuest, mm::PageType::Writable), 0);
  mm::put_page_and_type(frames_, kLooseData);
  EXPECT_EQ(frames_.walk_generation(), before);
  ASSERT_EQ(mm::get_page_and_type(ctx, kLooseData, kGuest, mm::PageType::L1), 0);
  EXPECT_GT(frames_.walk_generation(), before) << "a type change";
  mm::put_page_and_type(frames_, kLooseData);
}
}  // namespace
