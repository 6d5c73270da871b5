// Linear (recursive) page tables (mm/linear_tables.h), as Xen 4.17's get_lN_linear_pagetable,
// inc_linear_entries / inc_linear_uses (XSA-240) and its fast-path whitelist (XSA-182).
#include "mm/linear_tables.h"
#include "mm_test_fixture.h"

namespace mm::testing {
namespace {

using MmLinearTables = MmuTest;

constexpr uint64_t kThirdL4 = 18;  // a third L4 (guest frame, otherwise unused)
constexpr unsigned kSlot = 5;      // a free guest slot

E linear(uint64_t mfn) { return E::from_mfn(mfn, E::kPresent | E::kUser | E::kAccessed); }
E linear_rw(uint64_t mfn) { return E::from_mfn(mfn, kTableFlags); }

// kL4's tree pinned, and the two spare L4s pinned empty.
class LinearTree : public MmLinearTables {
 protected:
  void SetUp() override {
    build_tree();
    ASSERT_EQ(pin(kL4, MMUEXT_PIN_L4_TABLE), 0);
    ASSERT_EQ(pin(kSpareL4, MMUEXT_PIN_L4_TABLE), 0);
    ASSERT_EQ(pin(kThirdL4, MMUEXT_PIN_L4_TABLE), 0);
  }
};

TEST_F(LinearTree, AReadOnlySelfMapIsAcceptedAndHoldsNothing) {
  const auto before = snapshot();
  ASSERT_EQ(update(kL4, kSlot, linear(kL4)), 0);
  EXPECT_EQ(read(kL4, kSlot).mfn(), kL4);
  EXPECT_FALSE(read(kL4, kSlot).writable());
  EXPECT_COUNTS_UNCHANGED(before);
  EXPECT_EQ(info(kL4).linear_entries(), 0u);
  EXPECT_EQ(info(kL4).linear_uses(), 0u);
  EXPECT_EQ(info(kL4).links.count, 0u) << "a linear entry is not a link";
  EXPECT_AUDIT_CLEAN();
  ASSERT_EQ(update(kL4, kSlot, E()), 0);
  EXPECT_COUNTS_UNCHANGED(before);
  EXPECT_AUDIT_CLEAN();
}

TEST_F(LinearTree, AWritableSelfMapIsRefused) {
  const auto before = snapshot();
  EXPECT_EQ(update(kL4, kSlot, linear_rw(kL4)), -XEN_EINVAL);
  EXPECT_FALSE(read(kL4, kSlot).present());
  EXPECT_COUNTS_UNCHANGED(before);
}

// XSA-182: flipping RW alone was a fast-path change that skipped the linear rule.
TEST_F(LinearTree, FlippingAReadOnlyLinearEntryWritableIsRefused) {
  ASSERT_EQ(update(kL4, kSlot, linear(kL4)), 0);
  EXPECT_EQ(update(kL4, kSlot, linear_rw(kL4)), -XEN_EINVAL);
  EXPECT_FALSE(read(kL4, kSlot).writable());
  ASSERT_EQ(update(kL4, kSlot, linear(kSpareL4)), 0);
  EXPECT_EQ(update(kL4, kSlot, linear_rw(kSpareL4)), -XEN_EINVAL);
  EXPECT_FALSE(read(kL4, kSlot).writable());
  EXPECT_EQ(info(kSpareL4).linear_uses(), 1u);
  EXPECT_AUDIT_CLEAN();
}

TEST_F(LinearTree, NormalDirectoryEntriesStillFlipWritable) {
  const auto before = snapshot();
  ASSERT_EQ(update(kL4, 0, linear(kL3)), 0);  // read-only, still the normal link to an L3
  EXPECT_FALSE(read(kL4, 0).writable());
  ASSERT_EQ(update(kL4, 0, link(kL3)), 0);
  EXPECT_TRUE(read(kL4, 0).writable());
  EXPECT_COUNTS_UNCHANGED(before);
  EXPECT_EQ(info(kL3).links.count, 1u);
  EXPECT_AUDIT_CLEAN();
}

TEST_F(LinearTree, AnotherValidatedTableOfTheSameLevelTakesAGeneralAndATypeRef) {
  const PageInfo spare = info(kSpareL4);
  ASSERT_EQ(update(kL4, kSlot, linear(kSpareL4)), 0);
  EXPECT_EQ(info(kSpareL4).general_refs(), spare.general_refs() + 1);
  EXPECT_EQ(info(kSpareL4).type_refs(), spare.type_refs() + 1);
  EXPECT_EQ(info(kSpareL4).linear_uses(), 1u);
  EXPECT_EQ(info(kL4).linear_entries(), 1u);
  EXPECT_EQ(info(kSpareL4).links.count, 0u);
  EXPECT_AUDIT_CLEAN();
  ASSERT_EQ(update(kL4, kSlot, E()), 0);
  EXPECT_EQ(info(kSpareL4).general_refs(), spare.general_refs());
  EXPECT_EQ(info(kSpareL4).type_refs(), spare.type_refs());
  EXPECT_EQ(info(kSpareL4).linear_uses(), 0u);
  EXPECT_EQ(info(kL4).linear_entries(), 0u);
  EXPECT_AUDIT_CLEAN();
}

TEST_F(LinearTree, LowerLevelsLinkTablesOfTheirOwnLevel) {
  ASSERT_EQ(pin(kSpareL3, MMUEXT_PIN_L3_TABLE), 0);
  ASSERT_EQ(pin(kSpareL2, MMUEXT_PIN_L2_TABLE), 0);
  ASSERT_EQ(update(kL3, kSlot, linear(kSpareL3)), 0);
  ASSERT_EQ(update(kL2, kSlot, linear(kSpareL2)), 0);
  ASSERT_EQ(update(kL2, kSlot + 1, linear(kL2)), 0);  // and itself
  EXPECT_EQ(info(kSpareL3).linear_uses(), 1u);
  EXPECT_EQ(info(kSpareL2).linear_uses(), 1u);
  EXPECT_EQ(info(kL2).linear_entries(), 1u);
  EXPECT_AUDIT_CLEAN();
  EXPECT_EQ(update(kL2, kSlot + 2, linear_rw(kSpareL2)), -XEN_EINVAL);
  ASSERT_EQ(update(kL3, kSlot, E()), 0);
  ASSERT_EQ(update(kL2, kSlot, E()), 0);
  EXPECT_EQ(info(kL2).linear_entries(), 0u);
  EXPECT_AUDIT_CLEAN();
}

TEST_F(LinearTree, TargetsOfAnotherLevelOwnerOrValidationAreRefused) {
  const auto before = snapshot();
  EXPECT_EQ(update(kL4, kSlot, linear(kL2)), -XEN_EINVAL) << "an L2 is neither an L3 nor an L4";
  EXPECT_EQ(update(kL3, kSlot, linear(kL4)), -XEN_EINVAL) << "an L4 under an L3";
  EXPECT_EQ(update(kL4, kSlot, linear(kForeign)), -XEN_EINVAL) << "another domain's frame";
  EXPECT_COUNTS_UNCHANGED(before);
  // A table whose validation is under way (typed, not yet validated) is never a target: its
  // validation would have to finish first (Xen's rule 2).
  set_validated(frames_.info(kSpareL4), false);
  EXPECT_EQ(update(kL4, kSlot, linear(kSpareL4)), -XEN_EINVAL);
  set_validated(frames_.info(kSpareL4), true);
  EXPECT_COUNTS_UNCHANGED(before);
  // A fresh L3 linking a validated L3 validates with it.
  write(kSpareL3, 0, linear(kL3));
  ASSERT_EQ(pin(kSpareL3, MMUEXT_PIN_L3_TABLE), 0);
  EXPECT_EQ(info(kL3).linear_uses(), 1u);
  EXPECT_EQ(info(kSpareL3).linear_entries(), 1u);
  EXPECT_AUDIT_CLEAN();
}

// XSA-240: one level only. A table with linear entries is no target, a target has none.
TEST_F(LinearTree, ChainsOfLinearEntriesAreRefused) {
  ASSERT_EQ(update(kL4, kSlot, linear(kSpareL4)), 0);
  const auto before = snapshot();
  EXPECT_EQ(update(kSpareL4, kSlot, linear(kThirdL4)), -XEN_EINVAL) << "a target may not link further";
  EXPECT_EQ(update(kThirdL4, kSlot, linear(kL4)), -XEN_EINVAL) << "a table with linear entries is no target";
  EXPECT_EQ(update(kSpareL4, kSlot, linear(kL4)), -XEN_EINVAL) << "nor a cycle back";
  EXPECT_COUNTS_UNCHANGED(before);
  EXPECT_EQ(info(kThirdL4).linear_uses(), 0u);
  EXPECT_EQ(info(kSpareL4).linear_entries(), 0u);
  // Self-maps count in neither direction, and more linear entries to the same target do.
  EXPECT_EQ(update(kSpareL4, kSlot + 1, linear(kSpareL4)), 0);
  EXPECT_EQ(update(kL4, kSlot + 1, linear(kL4)), 0);
  EXPECT_EQ(update(kThirdL4, kSlot, linear(kSpareL4)), 0);
  EXPECT_EQ(info(kSpareL4).linear_uses(), 2u);
  EXPECT_AUDIT_CLEAN();
}

TEST_F(LinearTree, TheCountsStopAtXensLimit) {
  set_linear_uses(frames_.info(kSpareL4), kMaxLinearCount);
  const auto before = snapshot();
  EXPECT_EQ(update(kL4, kSlot, linear(kSpareL4)), -XEN_EINVAL);
  EXPECT_COUNTS_UNCHANGED(before);
  set_linear_uses(frames_.info(kSpareL4), 0);
  set_linear_entries(frames_.info(kL4), kMaxLinearCount);
  EXPECT_EQ(update(kL4, kSlot, linear(kSpareL4)), -XEN_EINVAL);
  EXPECT_COUNTS_UNCHANGED(before);
  set_linear_entries(frames_.info(kL4), 0);
}

TEST_F(LinearTree, TheLastTypeReleaseReleasesLinearEntriesAndTheirTargets) {
  ASSERT_EQ(update(kL4, kSlot, linear(kSpareL4)), 0);
  ASSERT_EQ(update(kL4, kSlot + 1, linear(kL4)), 0);
  ASSERT_EQ(unpin(kSpareL4), 0);
  EXPECT_TRUE(info(kSpareL4).is_validated_table()) << "the linear entry still holds it";
  EXPECT_AUDIT_CLEAN();
  ASSERT_EQ(unpin(kL4), 0);
  EXPECT_FALSE(info(kL4).is_validated_table());
  EXPECT_FALSE(info(kSpareL4).is_validated_table()) << "its last type ref was the linear entry's";
  for (uint64_t mfn : {kL4, kSpareL4, kL3, kL2, kL1}) {
    EXPECT_EQ(info(mfn).type_refs(), 0u) << mfn;
    EXPECT_EQ(info(mfn).general_refs(), 1u) << mfn << ": the allocation alone";
    EXPECT_EQ(info(mfn).linear_entries(), 0u) << mfn;
    EXPECT_EQ(info(mfn).linear_uses(), 0u) << mfn;
  }
  EXPECT_AUDIT_CLEAN();
}

TEST_F(MmLinearTables, ValidationTakesLinearEntriesAndRollsThemBack) {
  ASSERT_EQ(pin(kSpareL4, MMUEXT_PIN_L4_TABLE), 0);
  write(kL4, 1, linear(kL4));
  write(kL4, 2, linear(kSpareL4));
  ASSERT_EQ(pin(kL4, MMUEXT_PIN_L4_TABLE), 0) << "a self-map validates";
  EXPECT_EQ(info(kL4).linear_entries(), 1u);
  EXPECT_EQ(info(kSpareL4).linear_uses(), 1u);
  EXPECT_AUDIT_CLEAN();
  ASSERT_EQ(unpin(kL4), 0);
  EXPECT_EQ(info(kSpareL4).linear_uses(), 0u);
  EXPECT_AUDIT_CLEAN();

  const auto before = snapshot();
  write(kL4, 3, linear_rw(kL4));  // refused: the whole validation fails and gives back slot 2's
  EXPECT_EQ(pin(kL4, MMUEXT_PIN_L4_TABLE), -XEN_EINVAL);
  EXPECT_COUNTS_UNCHANGED(before);
  EXPECT_EQ(info(kL4).linear_entries(), 0u);
  EXPECT_EQ(info(kSpareL4).linear_uses(), 0u);
  EXPECT_AUDIT_CLEAN();
}

TEST_F(LinearTree, TheAuditChecksTheLinearCounts) {
  ASSERT_EQ(update(kL4, kSlot, linear(kSpareL4)), 0);
  set_linear_uses(frames_.info(kSpareL4), 2);
  AuditReport report = audit();
  ASSERT_EQ(report.mismatches, 1u);
  EXPECT_EQ(report.first[0].mfn, kSpareL4);
  EXPECT_TRUE(report.first[0].linear_counts);
  set_linear_uses(frames_.info(kSpareL4), 1);
  set_linear_entries(frames_.info(kSpareL4), 1);  // both at once: XSA-240's forbidden state
  EXPECT_FALSE(audit().clean());
  set_linear_entries(frames_.info(kSpareL4), 0);
  EXPECT_AUDIT_CLEAN();
}

}  // namespace
}  // namespace mm::testing
