// The decode cache's write-protected slots (bhyve's instruction cache): a slot answers without
// the bytes only for the same RIP and address space, while the walk of RIP's page ends at the
// same L1 entry and the frame table's code generation stands; and the frame table ticks that
// generation when a frame code was decoded from may change.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>

#include "emulate/decode_cache.h"
#include "mm_test_fixture.h"

namespace {
using pte_emulation::WalkGeneration;
using pte_write::DecodeCache;

constexpr uint64_t kRip = 0xffffffff81234567ULL, kL4 = 9, kMappingL1 = 3;
constexpr uint64_t kMaddr = (kMappingL1 << 12) + 0x234 * 8 % 4096;
constexpr uint8_t kMovStore[] = {0x48, 0x89, 0x37};     // mov %rsi,(%rdi)
constexpr uint8_t kMovStoreRdx[] = {0x48, 0x89, 0x17};  // mov %rdx,(%rdi)

class ProtectedDecodeCache : public ::testing::Test {
 protected:
  void SetUp() override {
    storage_.reset(static_cast<uint8_t*>(std::aligned_alloc(4096, 8 * 4096)));
    std::fill_n(storage_.get(), 8 * 4096, 0);
    memory_ = mm::MachineMemory{storage_.get(), 8};
    entry() = 0x5000 | 0x5;
    cache_->insert(kRip, kMovStore, pte_write::decode(kMovStore, sizeof kMovStore).write);
  }
  uint64_t& entry() { return *reinterpret_cast<uint64_t*>(memory_.frame(kMappingL1) + (kMaddr & 4095)); }
  const pte_write::DecodedWrite* find(uint64_t l4 = kL4, WalkGeneration walks = {1}, uint64_t code = 3) {
    return cache_->find_protected(l4, kRip, walks, code, memory_);
  }

  struct Free {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  std::unique_ptr<uint8_t, Free> storage_;
  mm::MachineMemory memory_{};
  std::unique_ptr<DecodeCache> cache_ = std::make_unique<DecodeCache>();
};
}  // namespace

TEST_F(ProtectedDecodeCache, AnswersOnlyOnceProtected) {
  EXPECT_EQ(find(), nullptr) << "decoded from bytes, not yet write-protected";
  cache_->protect(kL4, kRip, {1}, 3, kMaddr, memory_);
  const pte_write::DecodedWrite* hit = find();
  ASSERT_NE(hit, nullptr);
  EXPECT_EQ(hit->length, 3);
  EXPECT_EQ(cache_->protected_hits(), 1u);
  EXPECT_EQ(cache_->misses(), 0u);
}

TEST_F(ProtectedDecodeCache, MissesAnotherAddressSpaceGenerationOrCodeGeneration) {
  cache_->protect(kL4, kRip, {1}, 3, kMaddr, memory_);
  EXPECT_EQ(find(kL4 + 1), nullptr) << "another address space";
  EXPECT_EQ(find(kL4, {2}), nullptr) << "an upper-level entry changed";
  EXPECT_EQ(find(kL4, {1}, 4), nullptr) << "a decoded frame gained a writable mapping";
  EXPECT_EQ(cache_->find_protected(kL4, kRip + 1, {1}, 3, memory_), nullptr) << "another RIP";
}

TEST_F(ProtectedDecodeCache, MissesWhenRipIsRemapped) {
  cache_->protect(kL4, kRip, {1}, 3, kMaddr, memory_);
  entry() = 0x6000 | 0x5;  // the code page now maps another frame
  EXPECT_EQ(find(), nullptr);
  entry() = 0x5000 | 0x5 | 0x20;  // back, accessed
  EXPECT_NE(find(), nullptr);
}

TEST_F(ProtectedDecodeCache, ANewDecodeInTheSlotIsNotProtectedAndClearDrops) {
  cache_->protect(kL4, kRip, {1}, 3, kMaddr, memory_);
  cache_->insert(kRip, kMovStoreRdx, pte_write::decode(kMovStoreRdx, sizeof kMovStoreRdx).write);
  EXPECT_EQ(find(), nullptr);
  cache_->protect(kL4, kRip, {1}, 3, kMaddr, memory_);
  ASSERT_NE(find(), nullptr);
  const pte_write::DecodedWrite rdx = pte_write::decode(kMovStoreRdx, sizeof kMovStoreRdx).write;
  const pte_write::DecodedWrite rsi = pte_write::decode(kMovStore, sizeof kMovStore).write;
  EXPECT_EQ(find()->source.reg.gpr, rdx.source.reg.gpr);
  EXPECT_NE(find()->source.reg.gpr, rsi.source.reg.gpr);
  cache_->clear();
  EXPECT_EQ(find(), nullptr);
  cache_->protect(kL4, kRip + 64, {1}, 3, kMaddr, memory_);  // no such slot: nothing happens
  EXPECT_EQ(cache_->find_protected(kL4, kRip + 64, {1}, 3, memory_), nullptr);
}

TEST_F(ProtectedDecodeCache, BothSitesOfOneSetStayProtected) {
  // A second RIP of kRip's set: decoded after it, so kRip's slot is now the set's second.
  const auto set_of = [](uint64_t rip) { return unsigned((rip * 0x9e3779b97f4a7c15ULL) >> 58) % DecodeCache::kSets; };
  uint64_t other = kRip + 1;
  while (set_of(other) != set_of(kRip)) ++other;
  cache_->insert(other, kMovStoreRdx, pte_write::decode(kMovStoreRdx, sizeof kMovStoreRdx).write);
  cache_->protect(kL4, kRip, {1}, 3, kMaddr, memory_);
  cache_->protect(kL4, other, {1}, 3, kMaddr, memory_);
  ASSERT_NE(find(), nullptr) << "the older site, in the second slot";
  const pte_write::DecodedWrite* newer = cache_->find_protected(kL4, other, {1}, 3, memory_);
  ASSERT_NE(newer, nullptr);
  EXPECT_NE(newer->source.reg.gpr, find()->source.reg.gpr);
  EXPECT_EQ(cache_->find_protected(kL4 + 1, other, {1}, 3, memory_), nullptr) << "another address space";
}

// FrameTable's side: the code generation ticks when a marked frame takes a type or is freed.
class CodeGeneration : public mm::testing::MmuTest {};

TEST_F(CodeGeneration, TicksWhenADecodedFrameMayChange) {
  using namespace mm::testing;
  mm::MmuContext ctx = context();
  uint64_t before = frames_.code_generation();
  ASSERT_EQ(mm::get_page_and_type(ctx, kLooseData, kGuest, mm::PageType::Writable), 0);
  mm::put_page_and_type(frames_, kLooseData);
  EXPECT_EQ(frames_.code_generation(), before) << "nothing was decoded from it";
  frames_.note_decoded_code(kLooseData);
  ASSERT_EQ(mm::get_page_and_type(ctx, kLooseData, kGuest, mm::PageType::Writable), 0);
  EXPECT_GT(frames_.code_generation(), before) << "it gained a writable mapping";
  EXPECT_FALSE(info(kLooseData).has_decoded_code());
  mm::put_page_and_type(frames_, kLooseData);
  before = frames_.code_generation();
  frames_.note_decoded_code(kLooseData + 1);
  ASSERT_EQ(mm::get_page_and_type(ctx, kLooseData + 1, kGuest, mm::PageType::L1), 0);
  EXPECT_GT(frames_.code_generation(), before) << "it became a table (a detach may make it writable)";
  mm::put_page_and_type(frames_, kLooseData + 1);
  before = frames_.code_generation();
  frames_.note_decoded_code(kLooseData + 2);
  mm::drop_allocation(frames_, kLooseData + 2);
  EXPECT_GT(frames_.code_generation(), before) << "it was freed";
}
