// The decode cache returns a decoded instruction only for the same RIP, code frame and
// bytes; anything else is a miss, and hits and misses are counted.
#include "emulate/decode_cache.h"
#include <gtest/gtest.h>
#include <memory>
#include <vector>

namespace {
using pte_write::DecodeCache;
using pte_write::DecodedWrite;

constexpr uint64_t kRip = 0xffffffff81234567ULL;

DecodedWrite decoded(const uint8_t* bytes, size_t count) {
  pte_write::DecodeResult result = pte_write::decode(bytes, count);
  EXPECT_EQ(result.status, pte_write::Status::ok);
  return result.write;
}

class EmulateDecodeCache : public ::testing::Test {
 protected:
  // lock cmpxchg %rsi,(%rdi) followed by unrelated bytes the decode did not consume
  uint8_t bytes_[8] = {0xf0, 0x48, 0x0f, 0xb1, 0x37, 0xcc, 0xcc, 0xcc};
  std::unique_ptr<DecodeCache> cache_ = std::make_unique<DecodeCache>();
};
}  // namespace

TEST_F(EmulateDecodeCache, HitsForTheSameRipAndBytes) {
  EXPECT_EQ(cache_->find(kRip, bytes_, sizeof bytes_), nullptr);
  cache_->insert(kRip, bytes_, decoded(bytes_, sizeof bytes_));
  const DecodedWrite* hit = cache_->find(kRip, bytes_, sizeof bytes_);
  ASSERT_NE(hit, nullptr);
  EXPECT_EQ(hit->operation, pte_write::Operation::cmpxchg);
  EXPECT_EQ(hit->length, 5);
  EXPECT_TRUE(hit->locked);
  EXPECT_EQ(cache_->hits(), 1u);
  EXPECT_EQ(cache_->misses(), 1u);
}

TEST_F(EmulateDecodeCache, BytesBeyondTheInstructionDoNotMatter) {
  cache_->insert(kRip, bytes_, decoded(bytes_, sizeof bytes_));
  bytes_[5] = 0x90;
  EXPECT_NE(cache_->find(kRip, bytes_, sizeof bytes_), nullptr);
  EXPECT_NE(cache_->find(kRip, bytes_, 5), nullptr) << "exactly the instruction available";
}

TEST_F(EmulateDecodeCache, ChangedCodeMisses) {
  cache_->insert(kRip, bytes_, decoded(bytes_, sizeof bytes_));
  bytes_[3] = 0xb3;  // now lock btr %rsi,(%rdi): same length, different instruction
  EXPECT_EQ(cache_->find(kRip, bytes_, sizeof bytes_), nullptr);
  bytes_[3] = 0xb1;
  EXPECT_NE(cache_->find(kRip, bytes_, sizeof bytes_), nullptr);
  EXPECT_EQ(cache_->hits(), 1u);
  EXPECT_EQ(cache_->misses(), 1u);
}

TEST_F(EmulateDecodeCache, AnotherRipMisses) {
  cache_->insert(kRip, bytes_, decoded(bytes_, sizeof bytes_));
  EXPECT_EQ(cache_->find(kRip + 1, bytes_, sizeof bytes_), nullptr);
}

TEST_F(EmulateDecodeCache, OtherCodeAtTheSameRipMisses) {
  // Another address space (or a remapped page) with different code at the same address: the
  // bytes decide, not the frame they came from.
  cache_->insert(kRip, bytes_, decoded(bytes_, sizeof bytes_));
  const uint8_t mov[] = {0x48, 0x89, 0x07, 0xcc, 0xcc};
  EXPECT_EQ(cache_->find(kRip, mov, sizeof mov), nullptr);
  cache_->insert(kRip, mov, decoded(mov, sizeof mov));
  const DecodedWrite* hit = cache_->find(kRip, mov, sizeof mov);
  ASSERT_NE(hit, nullptr);
  EXPECT_EQ(hit->length, 3);
  EXPECT_EQ(cache_->find(kRip, bytes_, sizeof bytes_), nullptr);
}

TEST_F(EmulateDecodeCache, FewerBytesThanTheInstructionMiss) {
  cache_->insert(kRip, bytes_, decoded(bytes_, sizeof bytes_));
  // The next page became unreadable and the fetch stopped short of the cached length.
  EXPECT_EQ(cache_->find(kRip, bytes_, 4), nullptr);
}

TEST_F(EmulateDecodeCache, ManyRipsKeepTheirOwnDecodes) {
  // A few distinct PTE-writing sites, as a kernel has, mostly stay cached together.
  const uint8_t mov[] = {0x48, 0x89, 0x07};
  const uint64_t sites = 8;
  for (uint64_t i = 0; i < sites; ++i) cache_->insert(kRip + 0x40 * i, mov, decoded(mov, sizeof mov));
  unsigned found = 0;
  for (uint64_t i = 0; i < sites; ++i) found += cache_->find(kRip + 0x40 * i, mov, sizeof mov) != nullptr;
  EXPECT_GE(found, sites - 1);
  // A slot shared by two keys holds the newer one and never answers for the older.
  for (uint64_t i = 0; i < 4 * DecodeCache::kSlots; ++i) {
    const uint64_t rip = kRip + 0x1000 * i;
    cache_->insert(rip, mov, decoded(mov, sizeof mov));
    const DecodedWrite* hit = cache_->find(rip, mov, sizeof mov);
    ASSERT_NE(hit, nullptr);
    EXPECT_EQ(hit->length, 3);
  }
}

// The RIPs of one set: the hash's top six bits equal (found by search, as the linker may place two
// hot PTE-writing sites).
static std::vector<uint64_t> rips_of_one_set(unsigned count) {
  std::vector<uint64_t> rips;
  const auto set_of = [](uint64_t rip) { return unsigned((rip * 0x9e3779b97f4a7c15ULL) >> 58) % DecodeCache::kSets; };
  for (uint64_t rip = kRip; rips.size() < count; ++rip)
    if (set_of(rip) == set_of(kRip)) rips.push_back(rip);
  return rips;
}

TEST_F(EmulateDecodeCache, TwoSitesOfOneSetAlternateWithoutMisses) {
  const uint8_t mov[] = {0x48, 0x89, 0x07};
  const std::vector<uint64_t> rips = rips_of_one_set(3);
  cache_->insert(rips[0], mov, decoded(mov, sizeof mov));
  cache_->insert(rips[1], bytes_, decoded(bytes_, sizeof bytes_));
  for (int round = 0; round < 4; ++round) {
    const DecodedWrite* first = cache_->find(rips[0], mov, sizeof mov);
    ASSERT_NE(first, nullptr);
    EXPECT_EQ(first->length, 3);
    const DecodedWrite* second = cache_->find(rips[1], bytes_, sizeof bytes_);
    ASSERT_NE(second, nullptr);
    EXPECT_EQ(second->length, 5);
  }
  EXPECT_EQ(cache_->misses(), 0u);
  // A third site drops the older of the two; nothing answers for a RIP it does not hold.
  cache_->insert(rips[2], mov, decoded(mov, sizeof mov));
  EXPECT_EQ(cache_->find(rips[0], mov, sizeof mov), nullptr);
  EXPECT_NE(cache_->find(rips[1], bytes_, sizeof bytes_), nullptr);
  EXPECT_NE(cache_->find(rips[2], mov, sizeof mov), nullptr);
  // New code at a RIP the second slot holds replaces that decode: never two decodes of one RIP.
  const uint8_t other[] = {0x48, 0x89, 0x17};  // mov %rdx,(%rdi)
  cache_->insert(rips[1], other, decoded(other, sizeof other));
  EXPECT_EQ(cache_->find(rips[1], bytes_, sizeof bytes_), nullptr);
  EXPECT_NE(cache_->find(rips[1], other, sizeof other), nullptr);
  EXPECT_NE(cache_->find(rips[2], mov, sizeof mov), nullptr);
}

TEST_F(EmulateDecodeCache, ClearForgetsEverything) {
  cache_->insert(kRip, bytes_, decoded(bytes_, sizeof bytes_));
  cache_->find(kRip, bytes_, sizeof bytes_);
  cache_->clear();
  EXPECT_EQ(cache_->hits(), 0u);
  EXPECT_EQ(cache_->find(kRip, bytes_, sizeof bytes_), nullptr);
}
