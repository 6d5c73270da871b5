// The vCPU bitmap of the guest-directed flushes (xen/mm/vcpu_bitmap.h): which vCPUs a bitmap
// names, how far it is read, and a word that cannot be read.
#include <gtest/gtest.h>

#include <vector>

#include "mm/vcpu_bitmap.h"

namespace {
struct Walk {
  bool ok;
  std::vector<uint32_t> ids;
  std::vector<uint64_t> words_read;
};

Walk walk(uint32_t max_vcpus, const std::vector<uint64_t>& words) {
  Walk result;
  result.ok = mm::for_each_vcpu_in_bitmap(
      max_vcpus,
      [&](uint64_t index, uint64_t& word) {
        result.words_read.push_back(index);
        if (index >= words.size()) return false;  // beyond what the guest mapped
        word = words[index];
        return true;
      },
      [&](uint32_t id) { result.ids.push_back(id); });
  return result;
}

TEST(MmVcpuBitmap, SetBitsBelowMaxVcpusAreTheVcpusNamed) {
  const Walk w = walk(8, {0b10100101});
  EXPECT_TRUE(w.ok);
  EXPECT_EQ(w.ids, (std::vector<uint32_t>{0, 2, 5, 7}));
  EXPECT_EQ(w.words_read, (std::vector<uint64_t>{0}));
}

TEST(MmVcpuBitmap, ABitAtOrBeyondMaxVcpusEndsTheWalk) {
  EXPECT_EQ(walk(4, {0b110010}).ids, (std::vector<uint32_t>{1}));
  EXPECT_EQ(walk(4, {~uint64_t{0}}).ids, (std::vector<uint32_t>{0, 1, 2, 3}));
  EXPECT_TRUE(walk(1, {uint64_t{1} << 63}).ok);
  EXPECT_TRUE(walk(1, {uint64_t{1} << 63}).ids.empty());
}

TEST(MmVcpuBitmap, OnlyTheWordsCoveringMaxVcpusAreRead) {
  EXPECT_EQ(walk(64, {0, 1}).words_read, (std::vector<uint64_t>{0}));
  const Walk w = walk(65, {0, 1});
  EXPECT_EQ(w.words_read, (std::vector<uint64_t>{0, 1}));
  EXPECT_EQ(w.ids, (std::vector<uint32_t>{64}));
  EXPECT_TRUE(walk(0, {}).ok) << "no vCPU: nothing read";
  EXPECT_TRUE(walk(0, {}).words_read.empty());
}

TEST(MmVcpuBitmap, AnUnreadableWordFails) {
  EXPECT_FALSE(walk(8, {}).ok);
  const Walk w = walk(65, {1});
  EXPECT_FALSE(w.ok);
  EXPECT_EQ(w.ids, (std::vector<uint32_t>{0})) << "handed out before the failure: the caller drops them";
}

TEST(MmVcpuBitmap, AnEmptyBitmapNamesNoVcpu) {
  const Walk w = walk(8, {0});
  EXPECT_TRUE(w.ok);
  EXPECT_TRUE(w.ids.empty());
}
}  // namespace
