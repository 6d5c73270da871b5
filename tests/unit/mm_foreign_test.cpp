// Frames given back by their domain (the release hook), and page-table work on another
// domain's behalf: the control domain's MMU_MACHPHYS_UPDATE for a foreign page owner, refused
// when the tables are not the caller's.
#include "mm_test_fixture.h"

namespace mm::testing {
namespace {
struct Released {
  static inline std::vector<std::pair<uint64_t, domid_t>> frames;
  static void record(uint64_t mfn, domid_t owner, bool) { frames.emplace_back(mfn, owner); }
};

class MmForeign : public MmuTest {
 protected:
  void SetUp() override {
    Released::frames.clear();
    frames_.set_release_hook({Released::record});
  }
};

TEST_F(MmForeign, DroppingTheAllocationOfAnUnusedFrameReleasesIt) {
  drop_allocation(frames_, kLooseData);
  ASSERT_EQ(Released::frames.size(), 1u);
  EXPECT_EQ(Released::frames[0].first, kLooseData);
  EXPECT_EQ(Released::frames[0].second, kGuest);
  EXPECT_TRUE(frames_.info(kLooseData).is_free());
}

TEST_F(MmForeign, AMappedFrameIsReleasedWithItsLastReference) {
  build_tree();
  ASSERT_EQ(pin(kL4, MMUEXT_PIN_L4_TABLE), 0);
  drop_allocation(frames_, kData);  // still mapped RW by kL1[0]
  EXPECT_TRUE(Released::frames.empty());
  EXPECT_FALSE(frames_.info(kData).is_free());
  ASSERT_EQ(update(kL1, 0, E(0)), 0);
  ASSERT_EQ(Released::frames.size(), 1u);
  EXPECT_EQ(Released::frames[0].first, kData);
  EXPECT_TRUE(frames_.info(kData).is_free());
  EXPECT_TRUE(audit().clean());
}

TEST_F(MmForeign, MachphysUpdateForTheForeignPageOwner) {
  MmuContext dom0 = context(DomainIdentity{0, true, false});
  dom0.page_owner = kGuest;
  mmu_update_t set{(kLooseData << 12) | MMU_MACHPHYS_UPDATE, 0x1234};
  EXPECT_EQ(mmu_update(dom0, set), 0);
  EXPECT_EQ(m2p_[kLooseData], 0x1234u);
  mmu_update_t other{(kForeign << 12) | MMU_MACHPHYS_UPDATE, 1};
  EXPECT_EQ(mmu_update(dom0, other), -XEN_EINVAL) << "a frame the page owner does not own";
  MmuContext tables_of_guest = context();
  tables_of_guest.tables_of_caller = false;
  EXPECT_EQ(mmu_update(tables_of_guest, set), -XEN_EPERM) << "pt_dom names another domain";
}
}  // namespace
}  // namespace mm::testing
