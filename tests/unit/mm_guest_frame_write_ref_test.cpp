// The hypervisor's hold on a guest frame it stores into (mm/guest_frame_write_ref.h), and
// forged entries: what a store into a validated table would leave behind is never looked up
// in the frame table (mm/entry_refs.cpp) and the audit names the table that holds it.
#include "mm/guest_frame_write_ref.h"
#include "mm/entry_refs.h"
#include "mm_test_fixture.h"

namespace mm::testing {
namespace {

class MmGuestFrameWriteRef : public MmuTest {
 protected:
  // A frame far beyond the 64 of the fake machine: looking it up in the frame table reads past
  // the PageInfo array (AddressSanitizer reports it).
  static constexpr uint64_t kBeyondTheTable = 0x100000;
  // The console ring's out_cons and out_prod, as one 64-bit entry of a table (entry 385).
  static constexpr unsigned kRingIndexesEntry = 385;

  int take(GuestFrameWriteRef& ref, uint64_t mfn, domid_t owner = kGuest) {
    auto ctx = context();
    return take_guest_frame_write_ref(ctx, ref, mfn, owner);
  }
  // What the hypervisor's store of the ring's indexes would do: a raw store into the frame.
  void store_behind_the_bookkeeping(uint64_t mfn, unsigned index, uint64_t value) {
    table_entries(frames_, mfn)[index] = value;
  }
};

TEST_F(MmGuestFrameWriteRef, HoldsAGeneralAndAWritableTypeReference) {
  const PageInfo before = info(kLooseData);
  GuestFrameWriteRef ref;
  ASSERT_EQ(take(ref, kLooseData), 0);
  EXPECT_TRUE(ref.held);
  EXPECT_EQ(ref.mfn, kLooseData);
  EXPECT_EQ(info(kLooseData).general_refs(), before.general_refs() + 1);
  EXPECT_EQ(info(kLooseData).type_refs(), 1u);
  EXPECT_TRUE(info(kLooseData).has_type(PageType::Writable));
  EXPECT_TRUE(audit({audit_hold(ref)}).clean());
  EXPECT_FALSE(audit().clean()) << "the hold is a reference no page table accounts for";
  release_guest_frame_write_ref(frames_, ref);
  EXPECT_FALSE(ref.held);
  EXPECT_TRUE(same_counts(before, info(kLooseData)));
  release_guest_frame_write_ref(frames_, ref);  // nothing held: nothing dropped
  EXPECT_TRUE(same_counts(before, info(kLooseData)));
  EXPECT_AUDIT_CLEAN();
}

// The point of the hold: while the hypervisor may store into the frame, the guest cannot make
// it a table of any level (pin, or link it from a table) nor a descriptor frame (set_gdt), as
// on Xen, where the frame's writable type count refuses every other type (-EINVAL).
TEST_F(MmGuestFrameWriteRef, AHeldFrameCanBecomeNoTableAndNoDescriptorFrame) {
  GuestFrameWriteRef ref;
  ASSERT_EQ(take(ref, kLooseData), 0);
  auto before = snapshot();
  for (unsigned cmd : {MMUEXT_PIN_L1_TABLE, MMUEXT_PIN_L2_TABLE, MMUEXT_PIN_L3_TABLE, MMUEXT_PIN_L4_TABLE})
    EXPECT_EQ(pin(kLooseData, cmd), -XEN_EINVAL) << cmd;
  auto ctx = context();
  EXPECT_EQ(get_page_and_type(ctx, kLooseData, kGuest, PageType::SegmentDescriptor), -XEN_EINVAL);
  ASSERT_EQ(pin(kSpareL2, MMUEXT_PIN_L2_TABLE), 0);
  EXPECT_EQ(update(kSpareL2, 0, link(kLooseData)), -XEN_EINVAL) << "an L2 entry linking it as an L1";
  ASSERT_EQ(unpin(kSpareL2), 0);
  EXPECT_COUNTS_UNCHANGED(before);
  // A read-only and a writable mapping are still the guest's to make.
  ASSERT_EQ(pin(kSpareL1, MMUEXT_PIN_L1_TABLE), 0);
  EXPECT_EQ(update(kSpareL1, 0, ro(kLooseData)), 0);
  EXPECT_EQ(update(kSpareL1, 1, rw(kLooseData)), 0);
  EXPECT_TRUE(audit({audit_hold(ref)}).clean());
  ASSERT_EQ(unpin(kSpareL1), 0);
  release_guest_frame_write_ref(frames_, ref);
  EXPECT_AUDIT_CLEAN();
}

TEST_F(MmGuestFrameWriteRef, RefusesFramesItMustNotWrite) {
  ASSERT_EQ(pin(kSpareL1, MMUEXT_PIN_L1_TABLE), 0);
  auto ctx = context();
  ASSERT_EQ(get_page_and_type(ctx, kLooseData + 1, kGuest, PageType::SegmentDescriptor), 0);
  auto before = snapshot();
  const uint64_t refused[] = {kSpareL1, kLooseData + 1, kForeign, kFreeFrame, kHypervisorFrame, kBeyondTheTable};
  for (uint64_t mfn : refused) {
    GuestFrameWriteRef ref;
    EXPECT_EQ(take(ref, mfn), -XEN_EINVAL) << mfn;
    EXPECT_FALSE(ref.held) << mfn;
  }
  GuestFrameWriteRef ref;
  ASSERT_EQ(take(ref, kLooseData), 0);
  EXPECT_EQ(take(ref, kLooseData + 2), -XEN_EINVAL) << "a hold holds one frame";
  EXPECT_EQ(ref.mfn, kLooseData);
  release_guest_frame_write_ref(frames_, ref);
  EXPECT_COUNTS_UNCHANGED(before);
}

// The guest gives the frame back (decrease_reservation drops the allocation): the frame stays
// the guest's, out of every allocator's reach, until the hold goes with the domain.
TEST_F(MmGuestFrameWriteRef, AFrameGivenBackStaysUntilTheHoldGoes) {
  GuestFrameWriteRef ref;
  ASSERT_EQ(take(ref, kLooseData), 0);
  drop_allocation(frames_, kLooseData);
  EXPECT_FALSE(info(kLooseData).is_free());
  EXPECT_EQ(info(kLooseData).owner(), kGuest);
  EXPECT_EQ(pin(kLooseData, MMUEXT_PIN_L1_TABLE), -XEN_EINVAL);
  release_guest_frame_write_ref(frames_, ref);
  EXPECT_TRUE(info(kLooseData).is_free());
}

// Before the hold, the guest pinned its console ring as an L2 and every notification stored
// the ring's indexes as entry 385. Whatever such a store leaves in a validated table of any
// level, releasing the entry (unpin, or an update replacing it) never looks its frame up
// unless it is in the frame table, and the audit names the table.
TEST_F(MmGuestFrameWriteRef, AForgedEntryBeyondTheFrameTableIsReleasedWithoutALookUp) {
  struct Case {
    uint64_t table, child;
    unsigned pin_cmd;
    PagingLevel level;
  };
  const Case cases[] = {{kSpareL2, kSpareL1, MMUEXT_PIN_L2_TABLE, PagingLevel::L2},
                        {kSpareL3, kSpareL2, MMUEXT_PIN_L3_TABLE, PagingLevel::L3},
                        {kSpareL4, kSpareL3, MMUEXT_PIN_L4_TABLE, PagingLevel::L4}};
  for (const Case& c : cases) {
    write(c.table, kRingIndexesEntry, link(c.child));
    ASSERT_EQ(pin(c.table, c.pin_cmd), 0) << c.table;
    store_behind_the_bookkeeping(c.table, kRingIndexesEntry, link(kBeyondTheTable).raw());
    AuditReport report = audit();
    EXPECT_FALSE(report.clean());
    bool table_named = false;
    for (unsigned i = 0; i < report.recorded; ++i)
      table_named |= report.first[i].mfn == c.table && report.first[i].entry_outside_table;
    EXPECT_TRUE(table_named) << "the audit names table " << c.table;
    ASSERT_EQ(unpin(c.table), 0) << c.table;  // releases the forged entry
    EXPECT_FALSE(info(c.table).validated());
    // The entry it replaced held references the unpin could not give back (the child's):
    // given back here so that the next case starts clean.
    const uint64_t slot = (c.table << kPageShift) + kRingIndexesEntry * sizeof(uint64_t);
    release_present_entry_references(frames_, c.level, link(c.child), slot);
    write(c.table, kRingIndexesEntry, E());
    EXPECT_AUDIT_CLEAN();
  }
}

TEST_F(MmGuestFrameWriteRef, AnUpdateReplacingAForgedEntryReleasesNothingBeyondTheTable) {
  // A forged L1 entry (a writable mapping of a frame beyond the table) is I/O memory to the
  // release: nothing held, nothing looked up.
  write(kL1, kRingIndexesEntry, ro(kLooseData));
  ASSERT_EQ(pin(kL1, MMUEXT_PIN_L1_TABLE), 0);
  store_behind_the_bookkeeping(kL1, kRingIndexesEntry, rw(kBeyondTheTable).raw());
  ASSERT_EQ(unpin(kL1), 0);
  // An L2's, replaced by mmu_update.
  write(kSpareL2, kRingIndexesEntry, link(kSpareL1));
  ASSERT_EQ(pin(kSpareL2, MMUEXT_PIN_L2_TABLE), 0);
  store_behind_the_bookkeeping(kSpareL2, kRingIndexesEntry, link(kBeyondTheTable).raw());
  EXPECT_EQ(update(kSpareL2, kRingIndexesEntry, E()), 0);
  EXPECT_EQ(read(kSpareL2, kRingIndexesEntry).raw(), 0u);
}

}  // namespace
}  // namespace mm::testing
