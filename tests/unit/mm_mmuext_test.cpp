#include "mm_test_fixture.h"

namespace mm::testing {
namespace {

class MmMmuext : public MmuTest {
 protected:
  int run(unsigned cmd, uint64_t arg, MmuEffects* effects = nullptr,
          DomainIdentity who = DomainIdentity{kGuest, false, false}) {
    mmuext_op_t op{};
    op.cmd = cmd;
    op.arg1.mfn = arg;
    auto ctx = context(who);
    int rc = mmuext_op(ctx, bases_, op);
    if (effects != nullptr) *effects = ctx.effects;
    return rc;
  }
  // A second, minimal address space: kSpareL4[0] -> kSpareL3.
  void build_second_space() {
    write(kSpareL4, 0, link(kSpareL3));
    write(kSpareL3, 0, link(kSpareL2));
  }
};

TEST_F(MmMmuext, NewBasePointerTakesAndReleasesL4Refs) {
  build_tree();
  build_second_space();
  MmuEffects effects;
  ASSERT_EQ(run(MMUEXT_NEW_BASEPTR, kL4, &effects), 0);
  EXPECT_TRUE(effects.load_kernel_base);
  EXPECT_EQ(bases_.kernel_mfn, kL4);
  EXPECT_EQ(info(kL4).type_refs(), 1u);
  EXPECT_EQ(info(kL4).general_refs(), 2u);
  EXPECT_AUDIT_CLEAN();

  ASSERT_EQ(run(MMUEXT_NEW_BASEPTR, kSpareL4, &effects), 0);
  EXPECT_EQ(bases_.kernel_mfn, kSpareL4);
  EXPECT_EQ(info(kL4).type_refs(), 0u) << "the old base is released";
  EXPECT_EQ(info(kL1).type_refs(), 0u) << "and its tree with it";
  EXPECT_EQ(info(kSpareL2).type_refs(), 1u);
  EXPECT_AUDIT_CLEAN();
}

TEST_F(MmMmuext, SameBasePointerOnlyReloads) {
  build_tree();
  ASSERT_EQ(run(MMUEXT_NEW_BASEPTR, kL4), 0);
  auto before = snapshot();
  MmuEffects effects;
  ASSERT_EQ(run(MMUEXT_NEW_BASEPTR, kL4, &effects), 0);
  EXPECT_TRUE(effects.load_kernel_base);
  EXPECT_COUNTS_UNCHANGED(before);
}

TEST_F(MmMmuext, BadBasePointersAreRefusedAndTheOldOneStays) {
  build_tree();
  ASSERT_EQ(run(MMUEXT_NEW_BASEPTR, kL4), 0);
  write(kSpareL4, 3, link(kData));  // kData is mapped writable: cannot become an L3
  auto before = snapshot();
  MmuEffects effects;
  EXPECT_EQ(run(MMUEXT_NEW_BASEPTR, kSpareL4, &effects), -XEN_EINVAL);
  EXPECT_FALSE(effects.load_kernel_base);
  EXPECT_EQ(run(MMUEXT_NEW_BASEPTR, kL3), -XEN_EINVAL) << "an L3 in use";
  EXPECT_EQ(run(MMUEXT_NEW_BASEPTR, kData), -XEN_EINVAL) << "a writable frame";
  EXPECT_EQ(run(MMUEXT_NEW_BASEPTR, kForeign), -XEN_EINVAL);
  EXPECT_EQ(run(MMUEXT_NEW_USER_BASEPTR, kForeign), -XEN_EINVAL);
  EXPECT_EQ(run(MMUEXT_NEW_BASEPTR, kFrames + 9), -XEN_EINVAL);
  EXPECT_EQ(bases_.kernel_mfn, kL4);
  EXPECT_EQ(bases_.user_mfn, 0u);
  EXPECT_COUNTS_UNCHANGED(before);
  EXPECT_AUDIT_CLEAN();
}

TEST_F(MmMmuext, UserBasePointerAndM2pVisibility) {
  build_tree();
  build_second_space();
  const E m2p_entry = slots_.slot(kReadOnlyM2pSlot);
  ASSERT_EQ(run(MMUEXT_NEW_BASEPTR, kL4), 0);
  MmuEffects effects;
  ASSERT_EQ(run(MMUEXT_NEW_USER_BASEPTR, kSpareL4, &effects), 0);
  EXPECT_TRUE(effects.user_base_changed);
  EXPECT_EQ(read(kSpareL4, kReadOnlyM2pSlot), m2p_entry) << "not strict: user sees the M2P";
  EXPECT_AUDIT_CLEAN();

  ASSERT_EQ(run(MMUEXT_NEW_USER_BASEPTR, 0), 0);
  EXPECT_EQ(bases_.user_mfn, 0u);
  EXPECT_EQ(info(kSpareL4).type_refs(), 0u);
  EXPECT_AUDIT_CLEAN();

  DomainIdentity strict{kGuest, false, true};
  ASSERT_EQ(run(MMUEXT_NEW_USER_BASEPTR, kSpareL4, nullptr, strict), 0);
  EXPECT_EQ(read(kSpareL4, kReadOnlyM2pSlot), E()) << "m2p_strict hides it from user mode";
  EXPECT_EQ(read(kL4, kReadOnlyM2pSlot), m2p_entry) << "the kernel still sees it";
  EXPECT_AUDIT_CLEAN();

  // The same table as kernel base gets the M2P back.
  ASSERT_EQ(run(MMUEXT_NEW_USER_BASEPTR, 0, nullptr, strict), 0);
  ASSERT_EQ(run(MMUEXT_NEW_BASEPTR, kSpareL4, nullptr, strict), 0);
  EXPECT_EQ(read(kSpareL4, kReadOnlyM2pSlot), m2p_entry);
  EXPECT_AUDIT_CLEAN();
}

TEST_F(MmMmuext, PinnedBaseSurvivesSwitchingAway) {
  build_tree();
  build_second_space();
  ASSERT_EQ(run(MMUEXT_PIN_L4_TABLE, kL4), 0);
  ASSERT_EQ(run(MMUEXT_NEW_BASEPTR, kL4), 0);
  EXPECT_EQ(info(kL4).type_refs(), 2u);
  ASSERT_EQ(run(MMUEXT_NEW_BASEPTR, kSpareL4), 0);
  EXPECT_TRUE(info(kL4).validated());
  EXPECT_EQ(info(kL1).type_refs(), 1u);
  EXPECT_AUDIT_CLEAN();
  ASSERT_EQ(run(MMUEXT_UNPIN_TABLE, kL4), 0);
  EXPECT_FALSE(info(kL4).validated());
  EXPECT_AUDIT_CLEAN();
}

TEST_F(MmMmuext, FlushRequestsAreEffectsOnly) {
  MmuEffects effects;
  auto before = snapshot();
  ASSERT_EQ(run(MMUEXT_TLB_FLUSH_LOCAL, 0, &effects), 0);
  EXPECT_TRUE(effects.flush_local_tlb);
  ASSERT_EQ(run(MMUEXT_TLB_FLUSH_ALL, 0, &effects), 0);
  EXPECT_TRUE(effects.flush_all_vcpu_tlbs);
  ASSERT_EQ(run(MMUEXT_INVLPG_LOCAL, 0x400000, &effects), 0);
  EXPECT_TRUE(effects.invalidate_page_local);
  EXPECT_EQ(effects.invalidate_address, 0x400000u);
  ASSERT_EQ(run(MMUEXT_INVLPG_ALL, 0x800000, &effects), 0);
  EXPECT_TRUE(effects.invalidate_page_all_vcpus);
  EXPECT_EQ(effects.invalidate_address, 0x800000u);
  EXPECT_COUNTS_UNCHANGED(before);
}

TEST_F(MmMmuext, OperationsLeftToTheGlueAreNotImplementedHere) {
  auto before = snapshot();
  for (unsigned cmd :
       std::initializer_list<unsigned>{MMUEXT_TLB_FLUSH_MULTI, MMUEXT_INVLPG_MULTI, MMUEXT_SET_LDT, MMUEXT_CLEAR_PAGE,
                                       MMUEXT_COPY_PAGE, MMUEXT_FLUSH_CACHE, MMUEXT_MARK_SUPER, 14u, 99u})
    EXPECT_EQ(run(cmd, kLooseData), -XEN_ENOSYS) << cmd;
  EXPECT_COUNTS_UNCHANGED(before);
}

TEST_F(MmMmuext, BatchReportsProgress) {
  build_tree();
  mmuext_op_t ops[3]{};
  ops[0].cmd = MMUEXT_PIN_L4_TABLE;
  ops[0].arg1.mfn = kL4;
  ops[1].cmd = MMUEXT_PIN_L4_TABLE;  // again: refused
  ops[1].arg1.mfn = kL4;
  ops[2].cmd = MMUEXT_NEW_BASEPTR;
  ops[2].arg1.mfn = kL4;
  unsigned done = 0;
  auto ctx = context();
  EXPECT_EQ(mmuext_op_batch(ctx, bases_, ops, 3, &done), -XEN_EINVAL);
  EXPECT_EQ(done, 1u);
  EXPECT_EQ(bases_.kernel_mfn, 0u);
  EXPECT_AUDIT_CLEAN();
}

TEST_F(MmMmuext, TeardownHelpersReleaseEverything) {
  build_tree();
  build_second_space();
  auto before = snapshot();
  ASSERT_EQ(run(MMUEXT_PIN_L4_TABLE, kL4), 0);
  ASSERT_EQ(run(MMUEXT_PIN_L1_TABLE, kSpareL1), 0);
  ASSERT_EQ(run(MMUEXT_NEW_BASEPTR, kL4), 0);
  ASSERT_EQ(run(MMUEXT_NEW_USER_BASEPTR, kSpareL4), 0);
  release_base_pointers(frames_, bases_);
  unpin_all(frames_, kGuest);
  EXPECT_COUNTS_UNCHANGED(before);
  EXPECT_AUDIT_CLEAN();
  for (uint64_t mfn = 10; mfn < 40; ++mfn) drop_allocation(frames_, mfn);
  for (uint64_t mfn = 10; mfn < 40; ++mfn) EXPECT_TRUE(info(mfn).is_free()) << mfn;
  EXPECT_AUDIT_CLEAN();
}

}  // namespace
}  // namespace mm::testing
