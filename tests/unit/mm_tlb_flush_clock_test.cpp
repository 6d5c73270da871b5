// The TLB flush clock (mm/tlb_flush_clock.h) and what the type rules make of it: a frame that
// changes type flushes only if it lost a reference since the last full flush, and
// update_va_mapping's invalidated removal of a writable mapping is taken back only when the
// invalidated address is the mapping's only one.
#include "mm_test_fixture.h"
#include "mm/tlb_flush_clock.h"

namespace mm::testing {
namespace {

TEST(MmTlbFlushClock, AStampIsStaleUntilTheNextFullFlush) {
  TlbFlushClock clock;
  EXPECT_FALSE(clock.may_hold(0)) << "a frame never stamped has nothing in the TLB";
  const uint64_t stamp = clock.now();
  EXPECT_TRUE(clock.may_hold(stamp));
  clock.full_flush();
  EXPECT_FALSE(clock.may_hold(stamp));
  const uint64_t later = clock.now();
  EXPECT_TRUE(clock.may_hold(later)) << "stamped after the flush";
  clock.full_flush();
  clock.full_flush();
  EXPECT_FALSE(clock.may_hold(later));
  EXPECT_FALSE(clock.may_hold(stamp));
}

constexpr uint64_t page(unsigned index) { return uint64_t{index} << kPageShift; }

class MmFlushClock : public MmuTest {
 protected:
  void SetUp() override {
    build_tree();
    ASSERT_EQ(pin(kL4, MMUEXT_PIN_L4_TABLE), 0);
  }
  int update_va(uint64_t va, E value, bool invalidated) {
    auto ctx = context();
    return update_va_mapping(ctx, kL4, va, value.raw(), invalidated);
  }
  // Pins `mfn` as an L1 and says whether that asked for the type-change flush.
  bool pin_l1_flushes(uint64_t mfn) {
    mmuext_op_t op{};
    op.cmd = MMUEXT_PIN_L1_TABLE;
    op.arg1.mfn = mfn;
    auto ctx = context();
    EXPECT_EQ(mmuext_op(ctx, bases_, op), 0);
    return ctx.effects.flush_domain_tlbs;
  }
  void full_flush() { frames_.flush_clock().full_flush(); }
};

TEST_F(MmFlushClock, AWritableMappingRemovedWithoutAFlushMakesTheTypeChangeFlush) {
  ASSERT_EQ(update(kL1, 200, rw(kLooseData)), 0);
  ASSERT_EQ(update(kL1, 200, E()), 0);  // mmu_update: no invalidation
  EXPECT_TRUE(pin_l1_flushes(kLooseData));
  EXPECT_AUDIT_CLEAN();
}

TEST_F(MmFlushClock, AFullFlushSinceTheRemovalMakesTheFlushNeedless) {
  ASSERT_EQ(update(kL1, 200, rw(kLooseData)), 0);
  ASSERT_EQ(update(kL1, 200, E()), 0);
  full_flush();
  EXPECT_FALSE(pin_l1_flushes(kLooseData));
  EXPECT_AUDIT_CLEAN();
}

TEST_F(MmFlushClock, ATableThatStopsBeingOneFlushesWhenItBecomesWritable) {
  pin_l1_flushes(kLooseData);
  ASSERT_EQ(unpin(kLooseData), 0);
  auto ctx = context();
  ASSERT_EQ(get_page_and_type(ctx, kLooseData, kGuest, PageType::Writable), 0);
  EXPECT_TRUE(ctx.effects.flush_domain_tlbs) << "its walks may still be cached";
  put_page_and_type(frames_, kLooseData);

  ASSERT_EQ(pin(kLooseData, MMUEXT_PIN_L1_TABLE), 0);
  ASSERT_EQ(unpin(kLooseData), 0);
  full_flush();
  auto after_flush = context();
  ASSERT_EQ(get_page_and_type(after_flush, kLooseData, kGuest, PageType::Writable), 0);
  EXPECT_FALSE(after_flush.effects.flush_domain_tlbs);
  put_page_and_type(frames_, kLooseData);
  EXPECT_AUDIT_CLEAN();
}

TEST_F(MmFlushClock, AnInvalidatedRemovalOfTheOnlyMappingNeedsNoFlush) {
  ASSERT_EQ(update_va(page(200), rw(kLooseData), false), 0);
  full_flush();                                              // whatever the fixture's set-up stamped is gone
  ASSERT_EQ(update_va(page(200), ro(kLooseData), true), 0);  // read-only, va invalidated
  EXPECT_FALSE(pin_l1_flushes(kLooseData));
  EXPECT_AUDIT_CLEAN();
}

TEST_F(MmFlushClock, AnInvalidationDoesNotCoverAnEarlierRemoval) {
  ASSERT_EQ(update_va(page(200), rw(kLooseData), false), 0);
  ASSERT_EQ(update_va(page(201), rw(kLooseData), false), 0);
  full_flush();
  ASSERT_EQ(update_va(page(201), E(), false), 0);  // page(201) may still be writable in the TLB
  ASSERT_EQ(update_va(page(200), E(), true), 0);
  EXPECT_TRUE(pin_l1_flushes(kLooseData));
  EXPECT_AUDIT_CLEAN();
}

TEST_F(MmFlushClock, AnUninvalidatedRemovalStillFlushes) {
  ASSERT_EQ(update_va(page(200), rw(kLooseData), false), 0);
  full_flush();
  ASSERT_EQ(update_va(page(200), E(), false), 0);
  EXPECT_TRUE(pin_l1_flushes(kLooseData));
}

TEST_F(MmFlushClock, AnL1LinkedTwiceMapsTheEntryAtTwoAddresses) {
  ASSERT_EQ(update(kL2, 1, link(kL1)), 0);  // kL1 also at 2 MiB: page(200) + 2 MiB aliases
  ASSERT_EQ(update_va(page(200), rw(kLooseData), false), 0);
  full_flush();
  ASSERT_EQ(update_va(page(200), E(), true), 0);  // the alias is not invalidated
  EXPECT_TRUE(pin_l1_flushes(kLooseData));
  EXPECT_AUDIT_CLEAN();
}

TEST_F(MmFlushClock, AnL1UnlinkedSinceTheLastFlushMayStillBeWalkedThere) {
  ASSERT_EQ(update(kL2, 1, link(kL1)), 0);
  ASSERT_EQ(update_va(page(200), rw(kLooseData), false), 0);
  full_flush();
  ASSERT_EQ(update(kL2, 1, E()), 0);  // kL1 is linked once again, but the alias may be cached
  ASSERT_EQ(update_va(page(200), E(), true), 0);
  EXPECT_TRUE(pin_l1_flushes(kLooseData));
  EXPECT_AUDIT_CLEAN();
}

TEST_F(MmFlushClock, AnL3LinkedAtAnotherL4SlotAliasesEverythingBelow) {
  ASSERT_EQ(update(kL4, 5, link(kL3)), 0);  // kL3 at slot 0 and slot 5
  ASSERT_EQ(update_va(page(200), rw(kLooseData), false), 0);
  full_flush();
  ASSERT_EQ(update_va(page(200), E(), true), 0);
  EXPECT_TRUE(pin_l1_flushes(kLooseData));
}

TEST_F(MmFlushClock, AnL3LinkedAtTheSameSlotOfAnotherL4IsNoAlias) {
  // The kernel L4 mirrors the user L4's L3s at the same slots: the same addresses.
  write(kSpareL4, 0, link(kL3));
  ASSERT_EQ(pin(kSpareL4, MMUEXT_PIN_L4_TABLE), 0);
  ASSERT_EQ(update_va(page(200), rw(kLooseData), false), 0);
  full_flush();
  ASSERT_EQ(update_va(page(200), E(), true), 0);
  EXPECT_FALSE(pin_l1_flushes(kLooseData));
  EXPECT_AUDIT_CLEAN();
}

TEST_F(MmFlushClock, AFailedUpdateKeepsTheStamp) {
  ASSERT_EQ(update_va(page(200), rw(kLooseData), false), 0);
  full_flush();
  ASSERT_EQ(update(kL1, 201, rw(kLooseData)), 0);
  ASSERT_EQ(update(kL1, 201, E()), 0);  // stamped now
  EXPECT_EQ(update_va(page(200), rw(kL2), true), -XEN_EBUSY);
  ASSERT_EQ(update_va(page(200), E(), false), 0);
  EXPECT_TRUE(pin_l1_flushes(kLooseData));
}

}  // namespace
}  // namespace mm::testing
