// The climbs of table_reachability against plain breadth-first reference climbs (the way they
// were first written) on many random link shapes: one, two, unknown and missing links, links
// to frames outside the table, tables linked at matching and other indexes, bases anywhere.
// Every answer must be the same for every shape.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "ptwr/table_reachability.h"

namespace {
using mm::FrameTable;
using mm::PageInfo;
using mm::VcpuBasePointers;

constexpr unsigned index_of(uint64_t entry_maddr) { return unsigned(entry_maddr & (mm::kPageBytes - 1)) / 8; }
constexpr uint64_t table_of(uint64_t entry_maddr) { return entry_maddr >> mm::kPageShift; }

bool is_base(uint64_t mfn, const VcpuBasePointers& bases) { return mfn == bases.kernel_mfn || mfn == bases.user_mfn; }

// ---- The reference climbs. ----

bool reference_reachable_at(const FrameTable& frames, uint64_t mfn, const VcpuBasePointers& bases, int depth) {
  if (is_base(mfn, bases)) return true;
  const PageInfo* page = frames.find(mfn);
  if (page == nullptr || depth == 0) return true;
  if (page->links.count == 0) return false;
  if (!page->links.known()) return true;
  for (unsigned i = 0; i < page->links.count; ++i)
    if (reference_reachable_at(frames, table_of(page->links.slot[i]), bases, depth - 1)) return true;
  return false;
}

struct Climb {
  uint64_t tables[4];
  unsigned count = 0;
};

bool reference_may_translate_through(const FrameTable& frames, uint64_t l1, const VcpuBasePointers& bases,
                                     uint64_t address) {
  Climb climb{{l1}, 1};
  for (unsigned level = 1; level < 4; ++level) {
    const unsigned index = mm::table_index(address, mm::PagingLevel(level + 1));
    Climb above;
    for (unsigned t = 0; t < climb.count; ++t) {
      const PageInfo* page = frames.find(climb.tables[t]);
      if (page == nullptr || !page->links.known()) return true;
      for (unsigned i = 0; i < page->links.count; ++i) {
        if (index_of(page->links.slot[i]) != index) continue;
        const uint64_t upper = table_of(page->links.slot[i]);
        if (level == 3) {
          if (is_base(upper, bases)) return true;
        } else {
          above.tables[above.count++] = upper;
        }
      }
    }
    if (above.count == 0) return false;
    climb = above;
  }
  return false;
}

bool reference_translated_only_at(const FrameTable& frames, uint64_t entry_maddr, uint64_t address) {
  if (index_of(entry_maddr) != mm::table_index(address, mm::PagingLevel::L1)) return false;
  Climb climb{{table_of(entry_maddr)}, 1};
  for (unsigned level = 1; level < 4; ++level) {
    const unsigned index = mm::table_index(address, mm::PagingLevel(level + 1));
    Climb above;
    for (unsigned t = 0; t < climb.count; ++t) {
      const PageInfo* page = frames.find(climb.tables[t]);
      if (page == nullptr || page->links.count == 0 || !page->links.known()) return false;
      for (unsigned i = 0; i < page->links.count; ++i) {
        if (index_of(page->links.slot[i]) != index) return false;
        if (level < 3) above.tables[above.count++] = table_of(page->links.slot[i]);
      }
    }
    climb = above;
  }
  return true;
}

// ---- Random shapes. ----

// Frames 0..kTableFrames-1 have PageInfos; machine memory ends two frames earlier, and links
// may also name frames beyond both: all three kinds are "no such frame" to find().
constexpr uint64_t kTableFrames = 24;
constexpr uint64_t kMemoryFrames = kTableFrames - 2;
constexpr uint64_t kLinkedFrames = kTableFrames + 2;
constexpr unsigned kIndexes = 3;  // entries 0..2 of a table: links often sit at the address's index

class ReachabilityShapes : public ::testing::Test {
 protected:
  uint64_t random_slot() { return (pick(kLinkedFrames) << mm::kPageShift) + pick(kIndexes) * 8; }
  uint64_t pick(uint64_t below) { return std::uniform_int_distribution<uint64_t>(0, below - 1)(random_); }

  void randomise() {
    for (PageInfo& page : infos_) {
      page.links = mm::TableLinks{};
      switch (pick(8)) {
        case 0: break;  // linked nowhere
        case 1:
        case 2:
        case 3: page.links.add(random_slot()); break;
        case 4:
        case 5:
          page.links.add(random_slot());
          page.links.add(random_slot());
          break;
        case 6:
          for (int i = 0; i < 3; ++i) page.links.add(random_slot());
          break;  // unknown: beyond two
        case 7:
          page.links.add(random_slot());
          page.links.add(random_slot());
          page.links.remove(~uint64_t{0});
          break;  // unknown: an untracked link went away
      }
    }
    bases_.kernel_mfn = pick(kLinkedFrames);
    bases_.user_mfn = pick(3) == 0 ? 0 : pick(kLinkedFrames);
  }

  uint64_t random_address() {
    uint64_t address = 0;
    for (unsigned level = 1; level <= 4; ++level) address |= pick(kIndexes) << (mm::kPageShift + 9 * (level - 1));
    return address;
  }

  // An address whose indexes follow the first links up from `table` (as far as they go),
  // with `l1_index` at L1: where the climbs above find matching links.
  uint64_t address_along(uint64_t table, unsigned l1_index) {
    uint64_t address = random_address() & ~(uint64_t{511} << mm::kPageShift);
    address |= uint64_t{l1_index} << mm::kPageShift;
    for (unsigned level = 2; level <= 4; ++level) {
      const PageInfo* page = frames_.find(table);
      if (page == nullptr || page->links.count == 0 || page->links.slot[0] == 0) break;
      const unsigned shift = mm::kPageShift + 9 * (level - 1);
      address = (address & ~(uint64_t{511} << shift)) | uint64_t{index_of(page->links.slot[0])} << shift;
      table = table_of(page->links.slot[0]);
    }
    return address;
  }

  std::mt19937_64 random_{12};
  std::vector<PageInfo> infos_ = std::vector<PageInfo>(kTableFrames);
  FrameTable frames_{infos_.data(), kTableFrames, mm::MachineMemory{nullptr, kMemoryFrames}};
  VcpuBasePointers bases_;
};

TEST_F(ReachabilityShapes, EveryClimbAnswersAsTheBreadthFirstReference) {
  unsigned answers[3][2] = {};
  for (int shape = 0; shape < 4000; ++shape) {
    randomise();
    for (int query = 0; query < 8; ++query) {
      const uint64_t table = pick(kLinkedFrames);
      const uint64_t entry = random_slot();
      const bool along = query % 2 == 1;
      const uint64_t address = along ? address_along(table, 0) : random_address();
      const uint64_t entry_address = along ? address_along(table_of(entry), index_of(entry)) : address;
      const bool reachable = ptwr::reachable(frames_, table, bases_);
      const bool through = ptwr::may_translate_through(frames_, table, bases_, address);
      const bool only_at = ptwr::translated_only_at(frames_, entry, entry_address);
      ASSERT_EQ(reachable, reference_reachable_at(frames_, table, bases_, 3)) << "shape " << shape;
      ASSERT_EQ(through, reference_may_translate_through(frames_, table, bases_, address)) << "shape " << shape;
      ASSERT_EQ(only_at, reference_translated_only_at(frames_, entry, entry_address)) << "shape " << shape;
      ++answers[0][reachable];
      ++answers[1][through];
      ++answers[2][only_at];
    }
  }
  // The shapes give every answer both ways often enough to mean something.
  for (auto& answer : answers) {
    EXPECT_GT(answer[0], 500u);
    EXPECT_GT(answer[1], 500u);
  }
}
}  // namespace
