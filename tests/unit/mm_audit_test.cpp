#include "mm/entry_update.h"
#include "mm_test_fixture.h"

namespace mm::testing {
namespace {

class MmAudit : public MmuTest {
 protected:
  void SetUp() override {
    build_tree();
    ASSERT_EQ(pin(kL4, MMUEXT_PIN_L4_TABLE), 0);
    ASSERT_TRUE(audit().clean());
  }
};

TEST_F(MmAudit, ReportsAnExtraGeneralRef) {
  set_general_refs(infos_[kData + 2], infos_[kData + 2].general_refs() + 1);
  AuditReport report = audit();
  ASSERT_EQ(report.mismatches, 1u);
  ASSERT_EQ(report.recorded, 1u);
  EXPECT_EQ(report.first[0].mfn, kData + 2);
  EXPECT_EQ(report.first[0].expected_general, 2u);
  EXPECT_EQ(report.first[0].actual_general, 3u);
}

TEST_F(MmAudit, ReportsAMissingTypeRef) {
  set_type_refs(infos_[kData + 1], infos_[kData + 1].type_refs() - 1);  // mapped RW by kL1[1]
  AuditReport report = audit();
  ASSERT_EQ(report.mismatches, 1u);
  EXPECT_EQ(report.first[0].mfn, kData + 1);
  EXPECT_EQ(report.first[0].expected_type_refs, 1u);
  EXPECT_EQ(report.first[0].actual_type_refs, 0u);
}

TEST_F(MmAudit, ReportsAWrongType) {
  set_type(infos_[kL1], PageType::L2);
  AuditReport report = audit();
  EXPECT_GE(report.mismatches, 1u);
  bool found = false;
  for (unsigned i = 0; i < report.recorded; ++i)
    if (report.first[i].mfn == kL1) {
      found = true;
      EXPECT_EQ(report.first[i].expected_type, PageType::L1);
      EXPECT_EQ(report.first[i].actual_type, PageType::L2);
    }
  EXPECT_TRUE(found);
}

TEST_F(MmAudit, ReportsAnEntryWrittenBehindTheBookkeeping) {
  write(kL1, 300, rw(kLooseData));  // as if a guest had written a validated table directly
  AuditReport report = audit();
  ASSERT_EQ(report.mismatches, 2u);  // the frame it maps, and the table: its block is untracked
  EXPECT_EQ(report.first[0].mfn, kL1);
  EXPECT_TRUE(report.first[0].untracked_block);
  EXPECT_EQ(report.first[1].mfn, kLooseData);
  EXPECT_FALSE(report.first[1].untracked_block);
  EXPECT_EQ(report.first[1].expected_type_refs, 1u);
  EXPECT_EQ(report.first[1].actual_type_refs, 0u);
}

// Teardown and detach read only a table's nonzero_blocks: an entry anywhere else, even one
// that holds no reference (not present), is a store that bypassed table_access.
TEST_F(MmAudit, ReportsANonzeroEntryOutsideTheTrackedBlocks) {
  write(kL1, 300, PageTableEntry(0x2000));  // a swap entry, written behind the bookkeeping
  AuditReport report = audit();
  ASSERT_EQ(report.mismatches, 1u);
  EXPECT_EQ(report.first[0].mfn, kL1);
  EXPECT_TRUE(report.first[0].untracked_block);
}

TEST_F(MmAudit, EntriesStoredThroughTheUpdatePathAreTracked) {
  auto ctx = context();
  ASSERT_EQ(update_table_entry(ctx, kL1, 300, PageTableEntry(0x2000), false), 0);
  ASSERT_EQ(update_table_entry(ctx, kL1, 301, ro(kLooseData), false), 0);
  EXPECT_NE(infos_[kL1].nonzero_blocks & block_of(300), 0u);
  EXPECT_TRUE(audit().clean());
  // Clearing an entry keeps its block named (a superset), and the audit stays clean.
  ASSERT_EQ(update_table_entry(ctx, kL1, 301, PageTableEntry(0), false), 0);
  ASSERT_EQ(update_table_entry(ctx, kL1, 300, PageTableEntry(0), false), 0);
  EXPECT_NE(infos_[kL1].nonzero_blocks & block_of(300), 0u);
  EXPECT_TRUE(audit().clean());
}

TEST_F(MmAudit, ReportsAConflictingUse) {
  write(kL1, 300, rw(kL3));  // a writable mapping of a page table, behind our back
  AuditReport report = audit();
  EXPECT_GE(report.mismatches, 1u);
  EXPECT_EQ(report.first[0].mfn, kL3);
}

TEST_F(MmAudit, ReportsAnUnreachableValidatedTable) {
  set_pinned(infos_[kL4], false);  // a leaked pin: tables validated, nothing holds them
  AuditReport report = audit();
  EXPECT_GE(report.mismatches, 1u);
  EXPECT_EQ(report.first[0].mfn, kL4);
  EXPECT_EQ(report.first[0].expected_type_refs, 0u);
  EXPECT_EQ(report.first[0].actual_type_refs, 1u);
}

TEST_F(MmAudit, ExternalHoldsAreAccountedFor) {
  auto ctx = context();
  ASSERT_EQ(get_page_and_type(ctx, kLooseData, kGuest, PageType::Writable), 0);
  EXPECT_FALSE(audit().clean());
  EXPECT_TRUE(audit({ExternalHold{kLooseData, 1, 1, PageType::Writable}}).clean());
}

TEST_F(MmAudit, RecordsOnlyTheFirstFewButCountsAll) {
  for (uint64_t mfn = kLooseData; mfn < kLooseData + 10; ++mfn)
    set_general_refs(infos_[mfn], infos_[mfn].general_refs() + 1);
  AuditReport report = audit();
  EXPECT_EQ(report.mismatches, 10u);
  EXPECT_EQ(report.recorded, AuditReport::kRecorded);
  EXPECT_EQ(report.first[0].mfn, kLooseData);
}

}  // namespace
}  // namespace mm::testing
