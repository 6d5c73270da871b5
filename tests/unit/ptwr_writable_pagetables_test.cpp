// Writable pagetables: detach (unhook when reachable), native writes, reattach with
// re-validation of the changed entries only, and the audit staying clean throughout.
#include <functional>
#include "mm_test_fixture.h"
#include "ptwr/table_reachability.h"
#include "ptwr/writable_pagetables.h"

namespace mm::testing {
namespace {

class PtwrTest : public MmuTest {
 protected:
  void SetUp() override {
    build_tree();                   // kL4 -> kL3 -> kL2[0] -> kL1 -> kData..
    write(kL2, 1, link(kSpareL1));  // kSpareL1 maps kL1 read-only: the guest's
    write(kSpareL1, 0, ro(kL1));    // mapping through which it writes kL1
    write(kL1, 10, ro(kSpareL1));   // and kL1 maps kSpareL1 read-only
    ASSERT_EQ(pin(kL4, MMUEXT_PIN_L4_TABLE), 0);
    mmuext_op_t base{};
    base.cmd = MMUEXT_NEW_BASEPTR;
    base.arg1.mfn = kL4;
    auto ctx = context();
    ASSERT_EQ(mmuext_op(ctx, bases_, base), 0);
    wp_.set_snapshot_storage(snapshot_active_.data(), snapshot_inactive_.data());
    wp_.set_guest_reads_unhooked_entries(true);  // as our guest kernel declares
  }

  uint64_t slot_of(uint64_t table, unsigned index) { return (table << kPageShift) + index * 8; }

  // A write fault by code and stack far from every table of the fixture (L3 index 1).
  static constexpr uint64_t kElsewhere = 0x40000000;
  ptwr::DetachResult detach(MmuContext& ctx, uint64_t table, uint64_t mapping_slot, uint64_t va,
                            uint64_t rip = kElsewhere, uint64_t rsp = kElsewhere + 0x8000) {
    return wp_.detach(ctx, bases_, ptwr::WriteFault{table, mapping_slot, va, rip, rsp});
  }

  std::vector<uint64_t> snapshot_active_ = std::vector<uint64_t>(512);
  std::vector<uint64_t> snapshot_inactive_ = std::vector<uint64_t>(512);
  ptwr::WritablePagetables wp_;
};

TEST_F(PtwrTest, ReachabilityFollowsTheLinks) {
  EXPECT_TRUE(ptwr::reachable(frames_, kL1, bases_));
  EXPECT_TRUE(ptwr::reachable(frames_, kL2, bases_));
  EXPECT_FALSE(ptwr::reachable(frames_, kLooseData, bases_)) << "not linked anywhere";
  EXPECT_EQ(info(kL1).links.count, 1u);
  EXPECT_EQ(info(kL1).links.slot[0], slot_of(kL2, 0));
}

TEST(TableLinks, TracksTwoLinksExactlyAndForgetsBeyond) {
  TableLinks links;
  links.add(0x1000);
  links.add(0x2008);
  EXPECT_TRUE(links.known());
  links.remove(0x1000);
  EXPECT_EQ(links.count, 1u);
  EXPECT_EQ(links.slot[0], 0x2008u);
  links.add(0x3000);
  links.add(0x4000);
  EXPECT_FALSE(links.known()) << "three links";
  links.remove(0x3000);
  EXPECT_FALSE(links.known()) << "which two remain is unknown";
  links.remove(0x2008);
  links.remove(0x4000);
  EXPECT_EQ(links.count, 0u);
  EXPECT_TRUE(links.known());
}

TEST_F(PtwrTest, ActiveTableIsUnhookedAndRevalidatedOnReattach) {
  auto ctx = context();
  const E linking = read(kL2, 0);
  ptwr::DetachResult detached = detach(ctx, kL1, slot_of(kSpareL1, 0), 0x200000);
  ASSERT_TRUE(detached.detached);
  EXPECT_TRUE(detached.unhooked);
  EXPECT_TRUE(ctx.effects.flush_local_tlb);
  EXPECT_FALSE(read(kL2, 0).present()) << "L2 slot not present";
  EXPECT_EQ(read(kL2, 0).mfn(), kL1) << "but still names the table (the guest tests for none)";
  EXPECT_TRUE(read(kSpareL1, 0).writable()) << "guest mapping made writable";

  // The guest writes freely: one good new mapping, one removal, one forbidden RW mapping of
  // a page table, one entry rewritten with its old value.
  write(kL1, 20, rw(kLooseData));
  write(kL1, 1, E());
  write(kL1, 21, rw(kL3));
  write(kL1, 0, read(kL1, 0));

  auto ctx2 = context();
  ptwr::ReattachStats stats = wp_.reattach(ctx2, ptwr::SlotKind::active);
  EXPECT_EQ(stats.changed, 3u);
  EXPECT_EQ(stats.revalidated, 2u);
  EXPECT_EQ(stats.refused, 1u);
  EXPECT_EQ(stats.rehooked, 1u);
  EXPECT_EQ(read(kL2, 0).raw(), linking.raw()) << "L2 slot restored";
  EXPECT_FALSE(read(kSpareL1, 0).writable()) << "mapping read-only again";
  EXPECT_FALSE(read(kL1, 21).present()) << "refused entry keeps its old value";
  EXPECT_EQ(read(kL1, 20).mfn(), kLooseData);
  EXPECT_TRUE(info(kLooseData).has_type(PageType::Writable));
  EXPECT_EQ(info(kData + 1).general_refs(), 1u) << "removed mapping released its reference";
  EXPECT_FALSE(wp_.any_in_use());
  EXPECT_AUDIT_CLEAN();
}

// Reattach compares by 64-byte blocks (ptwr/table_snapshot): a change in a held block, in a
// block that was empty, in the last block, and held blocks left alone (one right after a
// changed block, which is compared entry by entry) are each treated as an entry-by-entry
// comparison would: changed entries validated (a bad one refused), unchanged ones not counted
// again.
TEST_F(PtwrTest, ReattachFindsChangesInEveryKindOfBlockAndRecountsNothingElse) {
  auto ctx = context();
  const uint32_t unchanged_refs = info(kData + 9).general_refs();
  ASSERT_TRUE(detach(ctx, kL1, slot_of(kSpareL1, 0), 0x200000).detached);
  write(kL1, 2, ro(kData + 2));     // block 0: write-protected, as a fork does
  write(kL1, 9, read(kL1, 9));      // block 1 (right after a changed block): same value
  write(kL1, 330, ro(kLooseData));  // block 41, empty at detach: a new mapping
  write(kL1, 511, rw(kL2));         // block 63, empty: a writable mapping of a page table

  auto ctx2 = context();
  ptwr::ReattachStats stats = wp_.reattach(ctx2, ptwr::SlotKind::active);
  EXPECT_EQ(stats.changed, 3u);
  EXPECT_EQ(stats.revalidated, 2u);
  EXPECT_EQ(stats.refused, 1u);
  EXPECT_FALSE(read(kL1, 2).writable());
  EXPECT_FALSE(info(kData + 2).has_type(PageType::Writable)) << "its writable reference released";
  EXPECT_EQ(read(kL1, 330).mfn(), kLooseData);
  EXPECT_EQ(read(kL1, 511).raw(), 0u) << "refused entry keeps its old value";
  EXPECT_EQ(info(kData + 9).general_refs(), unchanged_refs) << "an unchanged entry is not counted again";
  EXPECT_AUDIT_CLEAN();
}

// Reattach looks the table up once. Should it be no validated table by then (nothing in the
// hypervisor lets that happen while it is detached: every MMU operation reattaches first), no
// change the guest wrote is taken: each keeps its old value, as the entry update refuses them.
TEST_F(PtwrTest, ChangesToATableNoLongerValidatedAreAllRefused) {
  auto ctx = context();
  const E old_entry = read(kL1, 2);
  ASSERT_TRUE(detach(ctx, kL1, slot_of(kSpareL1, 0), 0x200000).detached);
  write(kL1, 2, ro(kData + 2));
  write(kL1, 330, ro(kLooseData));
  set_validated(infos_[kL1], false);
  auto ctx2 = context();
  ptwr::ReattachStats stats = wp_.reattach(ctx2, ptwr::SlotKind::active);
  set_validated(infos_[kL1], true);
  EXPECT_EQ(stats.changed, 2u);
  EXPECT_EQ(stats.refused, 2u);
  EXPECT_EQ(read(kL1, 2).raw(), old_entry.raw());
  EXPECT_EQ(read(kL1, 330).raw(), 0u);
  EXPECT_AUDIT_CLEAN();
}

// The table's nonzero_blocks grows by what reattach takes (through the entry update), so a
// second detach copies the block the guest filled and finds its later change.
TEST_F(PtwrTest, BlocksFilledWhileDetachedAreTrackedForTheNextDetach) {
  auto ctx = context();
  ASSERT_EQ(info(kL1).nonzero_blocks & block_of(330), 0u);
  ASSERT_TRUE(detach(ctx, kL1, slot_of(kSpareL1, 0), 0x200000).detached);
  write(kL1, 330, ro(kLooseData));
  auto ctx2 = context();
  wp_.reattach(ctx2, ptwr::SlotKind::active);
  EXPECT_NE(info(kL1).nonzero_blocks & block_of(330), 0u);
  auto ctx3 = context();
  ASSERT_TRUE(detach(ctx3, kL1, slot_of(kSpareL1, 0), 0x200000).detached);
  write(kL1, 330, E());
  auto ctx4 = context();
  ptwr::ReattachStats stats = wp_.reattach(ctx4, ptwr::SlotKind::active);
  EXPECT_EQ(stats.changed, 1u);
  EXPECT_EQ(stats.revalidated, 1u);
  EXPECT_EQ(info(kLooseData).general_refs(), 1u) << "the mapping's reference released";
  EXPECT_AUDIT_CLEAN();
}

TEST_F(PtwrTest, UnreachableTableNeedsNoUnhookOrFlush) {
  // kSpareL3 -> kSpareL2 -> kSpareL1 -> ..., linked nowhere the vCPU runs.
  write(kSpareL2, 0, link(kSpareL1));
  write(kSpareL3, 0, link(kSpareL2));
  ASSERT_EQ(pin(kSpareL3, MMUEXT_PIN_L3_TABLE), 0);
  ASSERT_EQ(update(kL2, 1, E()), 0);  // kSpareL1 now linked only by kSpareL2
  ASSERT_EQ(update(kL1, 10, ro(kSpareL1)), 0);
  auto ctx = context();
  ptwr::DetachResult detached = detach(ctx, kSpareL1, slot_of(kL1, 10), 0xa000);
  ASSERT_TRUE(detached.detached);
  EXPECT_FALSE(detached.unhooked);
  EXPECT_FALSE(ctx.effects.flush_local_tlb);
  EXPECT_TRUE(wp_.in_use(ptwr::SlotKind::inactive));
  EXPECT_TRUE(read(kSpareL2, 0).present()) << "stays hooked";
  write(kSpareL1, 5, ro(kLooseData + 2));
  auto ctx2 = context();
  ptwr::ReattachStats stats = wp_.reattach_all(ctx2);
  EXPECT_EQ(stats.revalidated, 1u);
  EXPECT_EQ(stats.rehooked, 0u);
  EXPECT_EQ(info(kLooseData + 2).general_refs(), 2u);
  EXPECT_AUDIT_CLEAN();
}

// Issue 11: Linux 6.1 reads a pmd's frame as pseudo-physical only when the entry is present, so
// an unhooked pmd (present clear, machine frame kept) sends vmalloc's PTE writes to the page
// whose pfn equals the L1's mfn. A guest that did not declare it reads unhooked entries gets
// its writes to a reachable L1 emulated: its L2 entries always read as it wrote them.
TEST_F(PtwrTest, ReachableTableOfAGuestThatReadsOnlyPresentEntriesIsNotUnhooked) {
  ptwr::WritablePagetables modern_guest;
  modern_guest.set_snapshot_storage(snapshot_active_.data(), snapshot_inactive_.data());
  EXPECT_FALSE(modern_guest.guest_reads_unhooked_entries()) << "off until the guest declares it";
  const E linking = read(kL2, 0);
  auto ctx = context();
  ptwr::DetachResult result =
      modern_guest.detach(ctx, bases_, ptwr::WriteFault{kL1, slot_of(kSpareL1, 0), 0x200000, kElsewhere, kElsewhere});
  EXPECT_FALSE(result.detached);
  EXPECT_FALSE(result.unhooked);
  EXPECT_EQ(result.declined, ptwr::Decline::would_unhook);
  EXPECT_EQ(read(kL2, 0).raw(), linking.raw()) << "the pmd the guest reads is still present";
  EXPECT_FALSE(read(kSpareL1, 0).writable()) << "the write is emulated instead";
  EXPECT_FALSE(ctx.effects.flush_local_tlb);
  EXPECT_FALSE(modern_guest.any_in_use());

  // A table the running address space cannot reach needs no unhook: still detached.
  write(kSpareL2, 0, link(kSpareL1));
  write(kSpareL3, 0, link(kSpareL2));
  ASSERT_EQ(pin(kSpareL3, MMUEXT_PIN_L3_TABLE), 0);
  ASSERT_EQ(update(kL2, 1, E()), 0);
  ASSERT_EQ(update(kL1, 10, ro(kSpareL1)), 0);
  auto ctx2 = context();
  result =
      modern_guest.detach(ctx2, bases_, ptwr::WriteFault{kSpareL1, slot_of(kL1, 10), 0xa000, kElsewhere, kElsewhere});
  EXPECT_TRUE(result.detached);
  EXPECT_FALSE(result.unhooked);
  EXPECT_TRUE(read(kSpareL2, 0).present());
  auto ctx3 = context();
  modern_guest.reattach_all(ctx3);
  EXPECT_AUDIT_CLEAN();
}

TEST_F(PtwrTest, IneligibleDetachesChangeNothing) {
  auto ctx = context();
  EXPECT_FALSE(detach(ctx, kL2, slot_of(kSpareL1, 0), 0x200000).detached) << "not an L1";
  EXPECT_FALSE(detach(ctx, kL1, slot_of(kSpareL1, 1), 0x201000).detached) << "entry maps nothing";
  EXPECT_FALSE(detach(ctx, kL1, slot_of(kL1, 10), 0xa000).detached) << "entry maps another frame";
  EXPECT_FALSE(detach(ctx, kLooseData, slot_of(kSpareL1, 0), 0x200000).detached) << "data frame";
  ptwr::WritablePagetables without_storage;
  EXPECT_FALSE(
      without_storage.detach(ctx, bases_, ptwr::WriteFault{kL1, slot_of(kSpareL1, 0), 0x200000, kElsewhere, kElsewhere})
          .detached);
  EXPECT_TRUE(read(kL2, 0).present());
  EXPECT_FALSE(read(kSpareL1, 0).writable());
  EXPECT_AUDIT_CLEAN();
}

TEST_F(PtwrTest, SecondActiveDetachEvictsTheFirst) {
  auto ctx = context();
  ASSERT_TRUE(detach(ctx, kL1, slot_of(kSpareL1, 0), 0x200000).detached);
  write(kL1, 30, ro(kLooseData + 4));
  // kSpareL1 is reachable too (kL2[1]); its mapping lives in kL1, which is detached: the
  // table being written is the mapping's table, so it must not be eligible until reattach.
  auto ctx2 = context();
  ptwr::DetachResult second = detach(ctx2, kSpareL1, slot_of(kL1, 10), 0xa000);
  EXPECT_TRUE(second.detached);
  EXPECT_EQ(second.evicted[0].reattached, 1u);
  EXPECT_EQ(second.evicted_table_mfn[0], kL1);
  EXPECT_EQ(second.evicted[0].revalidated, 1u);
  auto ctx3 = context();
  wp_.reattach_all(ctx3);
  EXPECT_AUDIT_CLEAN();
}

// ---- Item 3 of issue 8: the two slots never overlap. ----

// kOverlapL1 is an L1 nothing reachable links (kSpareL2, pinned, links it), mapped read-only by
// kSpareL1[3] at 0x203000; kSpareL1 is mapped by kL1[10] at 0xa000.
class PtwrOverlapTest : public PtwrTest {
 protected:
  static constexpr uint64_t kOverlapL1 = 18;
  static constexpr uint64_t kOverlapVa = 0x203000, kSpareL1Va = 0xa000;
  void SetUp() override {
    PtwrTest::SetUp();
    write(kSpareL2, 0, link(kOverlapL1));
    ASSERT_EQ(pin(kSpareL2, MMUEXT_PIN_L2_TABLE), 0);
    ASSERT_EQ(update(kSpareL1, 3, ro(kOverlapL1)), 0);
    ASSERT_TRUE(info(kOverlapL1).is_validated_table());
  }
};

// The reproduction: three plain stores (into the unreachable L1, into the L1 holding
// its mapping, into that mapping entry), one empty mmuext_op, then an mmu_update mapping the
// first table writable. The forged RW entry must not reach the second table's snapshot.
TEST_F(PtwrOverlapTest, TableHoldingTheOtherSlotsMappingEntryEvictsItFirst) {
  auto ctx = context();
  ptwr::DetachResult first = detach(ctx, kOverlapL1, slot_of(kSpareL1, 3), kOverlapVa);
  ASSERT_TRUE(first.detached);
  ASSERT_FALSE(first.unhooked);
  write(kOverlapL1, 7, ro(kLooseData + 1));
  EXPECT_TRUE(read(kSpareL1, 3).writable()) << "the hypervisor forged the mapping writable";

  auto ctx2 = context();
  ptwr::DetachResult second = detach(ctx2, kSpareL1, slot_of(kL1, 10), kSpareL1Va);
  ASSERT_TRUE(second.detached);
  EXPECT_TRUE(second.unhooked);
  EXPECT_EQ(second.evicted[unsigned(ptwr::SlotKind::inactive)].reattached, 1u);
  EXPECT_EQ(second.evicted_table_mfn[unsigned(ptwr::SlotKind::inactive)], kOverlapL1);
  EXPECT_EQ(second.evicted[unsigned(ptwr::SlotKind::inactive)].revalidated, 1u);
  EXPECT_FALSE(wp_.in_use(ptwr::SlotKind::inactive));
  EXPECT_FALSE(read(kSpareL1, 3).writable()) << "the snapshot is taken after the forged entry is gone";

  write(kSpareL1, 3, ro(kOverlapL1));  // the guest "rewrites" the mapping as it sees it
  auto ctx3 = context();
  ptwr::ReattachStats stats = wp_.reattach_all(ctx3);
  EXPECT_EQ(stats.refused, 0u);
  EXPECT_TRUE(info(kOverlapL1).is_validated_table()) << "no type reference released that was never taken";
  EXPECT_EQ(info(kOverlapL1).type_refs(), 1u);
  EXPECT_EQ(update(kL1, 11, rw(kOverlapL1)), -XEN_EBUSY)
      << "the table still linked by kSpareL2 cannot be mapped writable";
  EXPECT_AUDIT_CLEAN();
}

// The other order: the new table's mapping entry lies in the detached (guest-written) table.
// The detached one is reattached first, so the mapping entry is validated before it is used.
TEST_F(PtwrOverlapTest, TableWhoseMappingLiesInTheOtherSlotEvictsItFirst) {
  auto ctx = context();
  ASSERT_TRUE(detach(ctx, kSpareL1, slot_of(kL1, 10), kSpareL1Va).unhooked);
  auto ctx2 = context();
  ptwr::DetachResult second = detach(ctx2, kOverlapL1, slot_of(kSpareL1, 3), kOverlapVa);
  ASSERT_TRUE(second.detached);
  EXPECT_FALSE(second.unhooked);
  EXPECT_EQ(second.evicted[unsigned(ptwr::SlotKind::active)].reattached, 1u);
  EXPECT_EQ(second.evicted_table_mfn[unsigned(ptwr::SlotKind::active)], kSpareL1);
  EXPECT_FALSE(wp_.in_use(ptwr::SlotKind::active));
  EXPECT_TRUE(read(kL2, 1).present()) << "rehooked";
  auto ctx3 = context();
  ptwr::ReattachStats stats = wp_.reattach_all(ctx3);
  EXPECT_EQ(stats.refused, 0u) << "the forged entry never reached a re-validation";
  EXPECT_FALSE(read(kSpareL1, 3).writable());
  EXPECT_AUDIT_CLEAN();
}

TEST_F(PtwrOverlapTest, MappingEntryTheGuestChangedWhileDetachedIsLookedAtAgain) {
  auto ctx = context();
  ASSERT_TRUE(detach(ctx, kSpareL1, slot_of(kL1, 10), kSpareL1Va).unhooked);
  write(kSpareL1, 3, rw(kOverlapL1));  // forbidden: refused when kSpareL1 is re-validated
  auto ctx2 = context();
  ptwr::DetachResult refused_mapping = detach(ctx2, kOverlapL1, slot_of(kSpareL1, 3), kOverlapVa);
  EXPECT_TRUE(refused_mapping.detached) << "the refused entry kept its validated read-only value";
  EXPECT_EQ(refused_mapping.evicted[unsigned(ptwr::SlotKind::active)].refused, 1u);
  auto ctx3 = context();
  wp_.reattach_all(ctx3);

  auto ctx4 = context();
  ASSERT_TRUE(detach(ctx4, kSpareL1, slot_of(kL1, 10), kSpareL1Va).unhooked);
  write(kSpareL1, 3, E());  // the guest removed the mapping
  auto ctx5 = context();
  ptwr::DetachResult removed_mapping = detach(ctx5, kOverlapL1, slot_of(kSpareL1, 3), kOverlapVa);
  EXPECT_FALSE(removed_mapping.detached);
  EXPECT_EQ(removed_mapping.declined, ptwr::Decline::ineligible);
  EXPECT_EQ(removed_mapping.evicted[unsigned(ptwr::SlotKind::active)].reattached, 1u);
  EXPECT_TRUE(ctx5.effects.invalidate_page_local || ctx5.effects.flush_local_tlb)
      << "the eviction's TLB work is still asked for";
  EXPECT_FALSE(wp_.any_in_use());
  EXPECT_AUDIT_CLEAN();
}

// ---- Item 4: no writable translation survives reattach. ----

TEST_F(PtwrTest, MappingTranslatedAtOneAddressIsInvalidatedAlone) {
  auto ctx = context();
  ASSERT_TRUE(detach(ctx, kL1, slot_of(kSpareL1, 0), 0x200000).detached);
  EXPECT_FALSE(wp_.slot(ptwr::SlotKind::active).flush_at_reattach);
  auto ctx2 = context();
  wp_.reattach(ctx2, ptwr::SlotKind::active);
  EXPECT_FALSE(ctx2.effects.flush_local_tlb);
  EXPECT_TRUE(ctx2.effects.invalidate_page_local);
  EXPECT_EQ(ctx2.effects.invalidate_address, 0x200000u);
}

TEST_F(PtwrTest, MappingTableLinkedTwiceFlushesTheTlbAtReattach) {
  // kSpareL1 (holding kL1's mapping entry) is also linked at kL2[5]: the table is writable at
  // 0xa00000 too while detached, and that translation may be cached.
  ASSERT_EQ(update(kL2, 5, link(kSpareL1)), 0);
  auto ctx = context();
  ASSERT_TRUE(detach(ctx, kL1, slot_of(kSpareL1, 0), 0x200000).detached);
  EXPECT_TRUE(wp_.slot(ptwr::SlotKind::active).flush_at_reattach);
  auto ctx2 = context();
  wp_.reattach(ctx2, ptwr::SlotKind::active);
  EXPECT_TRUE(ctx2.effects.flush_local_tlb);
  ASSERT_EQ(update(kL2, 5, E()), 0);
  EXPECT_AUDIT_CLEAN();
}

TEST_F(PtwrTest, TranslatedOnlyAtChecksEveryLinkAtEveryLevel) {
  const uint64_t entry = slot_of(kSpareL1, 0);
  EXPECT_TRUE(ptwr::translated_only_at(frames_, entry, 0x200000));
  EXPECT_FALSE(ptwr::translated_only_at(frames_, entry, 0x201000)) << "entry not at the address's L1 index";
  EXPECT_FALSE(ptwr::translated_only_at(frames_, entry, 0x400000)) << "L1 linked at another L2 index";
  EXPECT_FALSE(ptwr::translated_only_at(frames_, entry, 0x40200000)) << "L2 linked at another L3 index";

  // A table on the way that nothing links (kSpareL2, pinned): only a stale paging-structure
  // cache could have walked it, and the TLB entry it left is at an unknown address.
  ASSERT_EQ(pin(kSpareL2, MMUEXT_PIN_L2_TABLE), 0);
  ASSERT_EQ(update(kSpareL2, 1, link(kSpareL1)), 0);
  EXPECT_FALSE(ptwr::translated_only_at(frames_, entry, 0x200000));
  ASSERT_EQ(update(kSpareL2, 1, E()), 0);
  EXPECT_TRUE(ptwr::translated_only_at(frames_, entry, 0x200000));

  // kL2 linked twice at L3 index 0, by two L3s each at L4 index 0: in either address space
  // that is the same linear address.
  ASSERT_EQ(pin(kSpareL4, MMUEXT_PIN_L4_TABLE), 0);
  ASSERT_EQ(pin(kSpareL3, MMUEXT_PIN_L3_TABLE), 0);
  ASSERT_EQ(update(kSpareL4, 0, link(kSpareL3)), 0);
  ASSERT_EQ(update(kSpareL3, 0, link(kL2)), 0);
  EXPECT_TRUE(ptwr::translated_only_at(frames_, entry, 0x200000));
  ASSERT_EQ(update(kSpareL4, 1, link(kL3)), 0);
  EXPECT_FALSE(ptwr::translated_only_at(frames_, entry, 0x200000)) << "kL3 also at L4 index 1";
  ASSERT_EQ(update(kSpareL4, 1, E()), 0);
  EXPECT_TRUE(ptwr::translated_only_at(frames_, entry, 0x200000));

  // Beyond two links the links are unknown.
  ASSERT_EQ(update(kSpareL3, 2, link(kL2)), 0);
  EXPECT_FALSE(ptwr::translated_only_at(frames_, entry, 0x200000)) << "kL2 linked three times";
}

// ---- Item 5: a link count that cannot wrap. ----

TEST(TableLinks, CountsBeyondSixteenBitsWithoutWrapping) {
  TableLinks links;
  for (uint32_t i = 0; i < 65536; ++i) links.add(0x1000 + (i % 512) * 8);
  EXPECT_EQ(links.count, 65536u);
  EXPECT_FALSE(links.known()) << "65,536 links are not 'known, none'";
  links.add(0x1000);
  EXPECT_EQ(links.count, 65537u);
  EXPECT_FALSE(links.known());
  for (uint32_t i = 0; i < 65537; ++i) links.remove(0x1000);
  EXPECT_EQ(links.count, 0u);
  EXPECT_TRUE(links.known());
}

TEST_F(PtwrTest, TableWithSixtyFiveThousandLinksIsNotDetachedAsUnreachable) {
  // What 128 L2s each linking kL1 in all 512 slots add to its links (the fixture has too few
  // frames to build them): with the live kL2[0] link that makes 65,537.
  TableLinks& links = frames_.info(kL1).links;
  for (uint32_t i = 0; i < 65536; ++i) links.add(slot_of(kSpareL2, i % 512));
  auto ctx = context();
  ptwr::DetachResult result = detach(ctx, kL1, slot_of(kSpareL1, 0), 0x200000);
  EXPECT_FALSE(result.detached);
  EXPECT_EQ(result.declined, ptwr::Decline::ineligible);
  EXPECT_TRUE(ptwr::reachable(frames_, kL1, bases_)) << "unknown links count as reachable";
  EXPECT_TRUE(read(kL2, 0).present());
}

// ---- Item 13: the guest always makes progress. ----

TEST_F(PtwrTest, UnhookThatWouldCutOffTheCodeOrStackIsDeclined) {
  // kL1 maps [0, 2 MiB): an instruction or a stack there could not run with it unhooked.
  auto ctx = context();
  ptwr::DetachResult code = detach(ctx, kL1, slot_of(kSpareL1, 0), 0x200000, 0x3000, kElsewhere);
  EXPECT_FALSE(code.detached);
  EXPECT_EQ(code.declined, ptwr::Decline::cuts_off_guest);
  ptwr::DetachResult stack = detach(ctx, kL1, slot_of(kSpareL1, 0), 0x200000, kElsewhere, 0x1ff000);
  EXPECT_EQ(stack.declined, ptwr::Decline::cuts_off_guest);
  EXPECT_TRUE(read(kL2, 0).present());
  EXPECT_FALSE(read(kSpareL1, 0).writable());
  EXPECT_FALSE(ctx.effects.flush_local_tlb || ctx.effects.invalidate_page_local) << "nothing to undo";
  EXPECT_FALSE(wp_.any_in_use());
  ptwr::DetachResult elsewhere = detach(ctx, kL1, slot_of(kSpareL1, 0), 0x200000, 0x203000, 0x3ff000);
  EXPECT_TRUE(elsewhere.detached) << "code and stack in kSpareL1's range, not kL1's";
}

TEST_F(PtwrTest, MayTranslateThroughFollowsTheIndexes) {
  EXPECT_TRUE(ptwr::may_translate_through(frames_, kL1, bases_, 0x1000));
  EXPECT_TRUE(ptwr::may_translate_through(frames_, kL1, bases_, 0x1fffff));
  EXPECT_FALSE(ptwr::may_translate_through(frames_, kL1, bases_, 0x200000));
  EXPECT_TRUE(ptwr::may_translate_through(frames_, kSpareL1, bases_, 0x200000));
  EXPECT_FALSE(ptwr::may_translate_through(frames_, kL1, bases_, 0x40001000)) << "another L3 index";
  EXPECT_FALSE(ptwr::may_translate_through(frames_, kL1, bases_, 0xffff800000001000)) << "another L4 index";
  EXPECT_FALSE(ptwr::may_translate_through(frames_, kL1, mm::VcpuBasePointers{}, 0x1000)) << "not running";
}

TEST_F(PtwrTest, SlotWhoseLastBatchChangedNothingEmulatesTheNextWrite) {
  auto ctx = context();
  ASSERT_TRUE(detach(ctx, kL1, slot_of(kSpareL1, 0), 0x200000).detached);
  auto ctx2 = context();
  wp_.reattach_all(ctx2);  // e.g. the retried store touched the unhooked range first
  auto ctx3 = context();
  ptwr::DetachResult stuck = detach(ctx3, kL1, slot_of(kSpareL1, 0), 0x200000);
  EXPECT_FALSE(stuck.detached);
  EXPECT_EQ(stuck.declined, ptwr::Decline::no_progress);
  EXPECT_TRUE(read(kL2, 0).present());
  auto ctx4 = context();
  EXPECT_TRUE(detach(ctx4, kL1, slot_of(kSpareL1, 0), 0x200000).detached) << "one emulation, then detach again";
  write(kL1, 40, ro(kLooseData));
  auto ctx5 = context();
  wp_.reattach_all(ctx5);
  auto ctx6 = context();
  EXPECT_TRUE(detach(ctx6, kL1, slot_of(kSpareL1, 0), 0x200000).detached) << "the last batch changed an entry";
  auto ctx7 = context();
  wp_.reattach_all(ctx7);
  EXPECT_AUDIT_CLEAN();
}

TEST_F(PtwrTest, NoProgressIsPerSlot) {
  ASSERT_EQ(pin(kSpareL1, MMUEXT_PIN_L1_TABLE), 0);
  ASSERT_EQ(update(kL2, 1, E()), 0);  // kSpareL1 now unreachable: the inactive slot
  auto ctx = context();
  ASSERT_TRUE(detach(ctx, kSpareL1, slot_of(kL1, 10), 0xa000).detached);
  auto ctx2 = context();
  wp_.reattach_all(ctx2);
  auto ctx3 = context();
  EXPECT_EQ(detach(ctx3, kSpareL1, slot_of(kL1, 10), 0xa000).declined, ptwr::Decline::no_progress);
  auto ctx4 = context();
  EXPECT_TRUE(detach(ctx4, kL1, slot_of(kSpareL1, 0), 0x200000).detached) << "the active slot made progress";
  auto ctx5 = context();
  wp_.reattach_all(ctx5);
  EXPECT_AUDIT_CLEAN();
}

// ---- Item 10: an unlink the guest did not flush keeps a table walkable. ----

TEST_F(PtwrTest, InactiveDetachFlushesAfterAnUnflushedUnlink) {
  ASSERT_EQ(pin(kSpareL1, MMUEXT_PIN_L1_TABLE), 0);
  auto unlink = context();
  mmu_update_t request{slot_of(kL2, 1) + MMU_NORMAL_PT_UPDATE, 0};
  ASSERT_EQ(mmu_update(unlink, request), 0);
  EXPECT_TRUE(unlink.effects.table_unlinked);
  EXPECT_FALSE(unlink.effects.flush_local_tlb) << "the guest asked for no flush";

  auto ctx = context();
  ASSERT_TRUE(detach(ctx, kSpareL1, slot_of(kL1, 10), 0xa000).detached);
  EXPECT_FALSE(ctx.effects.flush_local_tlb) << "nothing noted: an inactive detach needs no flush";
  write(kSpareL1, 9, ro(kLooseData));  // (a batch that changed something)
  auto ctx2 = context();
  wp_.reattach_all(ctx2);

  wp_.note_tables_unlinked();  // what the glue does with unlink.effects when it flushes nothing
  auto ctx3 = context();
  ASSERT_TRUE(detach(ctx3, kSpareL1, slot_of(kL1, 10), 0xa000).detached);
  EXPECT_TRUE(ctx3.effects.flush_local_tlb) << "the paging-structure caches may still link it";
  EXPECT_FALSE(wp_.unlinked_tables_may_be_cached()) << "that flush covers it";
  write(kSpareL1, 9, E());
  auto ctx4 = context();
  wp_.reattach_all(ctx4);

  wp_.note_tables_unlinked();
  wp_.note_full_tlb_flush();
  auto ctx5 = context();
  ASSERT_TRUE(detach(ctx5, kSpareL1, slot_of(kL1, 10), 0xa000).detached);
  EXPECT_FALSE(ctx5.effects.flush_local_tlb) << "a full flush since";
  write(kSpareL1, 9, ro(kLooseData));
  auto ctx6 = context();
  wp_.reattach_all(ctx6);
  EXPECT_AUDIT_CLEAN();
}

TEST_F(PtwrTest, OnlyRemovingOrReplacingALinkCountsAsUnlinking) {
  auto effects_of = [&](uint64_t table, unsigned index, E value) {
    auto ctx = context();
    mmu_update_t request{slot_of(table, index) + MMU_NORMAL_PT_UPDATE, value.raw()};
    EXPECT_EQ(mmu_update(ctx, request), 0);
    return ctx.effects.table_unlinked;
  };
  EXPECT_FALSE(effects_of(kL2, 7, link(kSpareL1))) << "a new link";
  EXPECT_FALSE(effects_of(kL2, 7, E::from_mfn(kSpareL1, kTableFlags & ~E::kWritable))) << "flags only";
  EXPECT_TRUE(effects_of(kL2, 7, E())) << "removed";
  EXPECT_FALSE(effects_of(kL1, 20, ro(kLooseData))) << "L1 entries link no table";
  EXPECT_FALSE(effects_of(kL1, 20, E()));
  ASSERT_EQ(pin(kSpareL1 + 1, MMUEXT_PIN_L1_TABLE), 0);
  EXPECT_FALSE(effects_of(kL2, 7, link(kSpareL1)));
  EXPECT_TRUE(effects_of(kL2, 7, link(kSpareL1 + 1))) << "replaced by another table";
  EXPECT_TRUE(effects_of(kL2, 7, E()));
  EXPECT_AUDIT_CLEAN();
}

TEST(MmuEffects, MergeKeepsTableUnlinked) {
  MmuEffects a, b;
  b.table_unlinked = true;
  a.merge(b);
  EXPECT_TRUE(a.table_unlinked);
}

// ---- Issue 30, item 5: writable pagetables in a domain whose vCPUs run on several CPUs. ----

// What OtherCpus was asked, and what the tables looked like then.
struct FlushRecord {
  const uint64_t* mapping = nullptr;  // the mapping entry of the detached table (kL1[10])
  unsigned calls = 0;
  uint64_t stamp = 0;
  bool this_cpu_too = false;
  bool mapping_writable_then = false;
  std::function<void()> meanwhile;  // what another CPU does before it takes the flush IPI
};

class PtwrSeveralCpusTest : public PtwrTest {
 protected:
  void SetUp() override {
    PtwrTest::SetUp();
    // kSpareL3 -> kSpareL2 -> kSpareL1, pinned, linked nowhere kL4 reaches; kL1[10] maps kSpareL1.
    write(kSpareL2, 0, link(kSpareL1));
    write(kSpareL3, 0, link(kSpareL2));
    ASSERT_EQ(pin(kSpareL3, MMUEXT_PIN_L3_TABLE), 0);
    ASSERT_EQ(update(kL2, 1, E()), 0);
    ASSERT_EQ(update(kL1, 10, ro(kSpareL1)), 0);
    wp_.set_other_cpus(ptwr::OtherCpus{&record_flush, &flushes_});
    flushes_.mapping = &table_entries(frames_, kL1)[10];
  }

  static void record_flush(void* cookie, uint64_t stamp, bool this_cpu_too) {
    auto& record = *static_cast<FlushRecord*>(cookie);
    ++record.calls;
    record.stamp = stamp;
    record.this_cpu_too = this_cpu_too;
    record.mapping_writable_then = E(__atomic_load_n(record.mapping, __ATOMIC_ACQUIRE)).writable();
    if (record.meanwhile) record.meanwhile();
  }

  // A detach by the vCPU running on kL4 while `others` are the other vCPUs' base pointers.
  ptwr::DetachResult detach_shared(MmuContext& ctx, uint64_t table, uint64_t mapping_slot, uint64_t va,
                                   std::vector<VcpuBasePointers> others = {}) {
    std::vector<VcpuBasePointers> all{bases_};
    all.insert(all.end(), others.begin(), others.end());
    return wp_.detach(ctx, ptwr::SharedView{all.data(), unsigned(all.size())},
                      ptwr::WriteFault{table, mapping_slot, va, kElsewhere, kElsewhere + 0x8000});
  }

  FlushRecord flushes_;
};

TEST_F(PtwrSeveralCpusTest, TableUnreachableFromEveryVcpuIsDetachedInactiveWithoutFlushes) {
  auto ctx = context();
  ptwr::DetachResult detached = detach_shared(ctx, kSpareL1, slot_of(kL1, 10), 0xa000);
  ASSERT_TRUE(detached.detached);
  EXPECT_FALSE(detached.unhooked);
  EXPECT_TRUE(wp_.slot(ptwr::SlotKind::inactive).other_cpus);
  EXPECT_EQ(flushes_.calls, 0u) << "no unlink noted: no CPU can walk it";
  EXPECT_FALSE(ctx.effects.flush_local_tlb);
  write(kSpareL1, 5, ro(kLooseData + 2));
  auto ctx2 = context();
  ptwr::ReattachStats stats = wp_.reattach_all(ctx2);
  EXPECT_EQ(stats.revalidated, 1u);
  EXPECT_EQ(flushes_.calls, 1u) << "the reattach flushes the other CPUs";
  EXPECT_AUDIT_CLEAN();
}

TEST_F(PtwrSeveralCpusTest, TableAnotherVcpusBasePointerReachesIsNotDetached) {
  // Another vCPU runs on kSpareL4 -> kSpareL3 -> kSpareL2 -> kSpareL1.
  write(kSpareL4, 0, link(kSpareL3));
  ASSERT_EQ(pin(kSpareL4, MMUEXT_PIN_L4_TABLE), 0);
  auto ctx = context();
  ptwr::DetachResult kernel = detach_shared(ctx, kSpareL1, slot_of(kL1, 10), 0xa000, {VcpuBasePointers{kSpareL4, 0}});
  EXPECT_FALSE(kernel.detached);
  EXPECT_EQ(kernel.declined, ptwr::Decline::shared_reachable);
  ptwr::DetachResult user = detach_shared(ctx, kSpareL1, slot_of(kL1, 10), 0xa000, {VcpuBasePointers{kL4, kSpareL4}});
  EXPECT_EQ(user.declined, ptwr::Decline::shared_reachable) << "its user base pointer counts too";
  EXPECT_FALSE(read(kL1, 10).writable());
  EXPECT_FALSE(wp_.any_in_use());
  // One vCPU's view (a domain on one CPU at a time) sees it unreachable.
  ASSERT_TRUE(detach(ctx, kSpareL1, slot_of(kL1, 10), 0xa000).detached);
  EXPECT_FALSE(wp_.slot(ptwr::SlotKind::inactive).other_cpus);
  auto ctx2 = context();
  wp_.reattach_all(ctx2);
  EXPECT_EQ(flushes_.calls, 1u) << "every reattach asks OtherCpus (set where guests run on every CPU)";
  EXPECT_AUDIT_CLEAN();
}

TEST_F(PtwrSeveralCpusTest, ReachableTableIsEmulatedEvenForAGuestThatReadsUnhookedEntries) {
  ASSERT_TRUE(wp_.guest_reads_unhooked_entries());
  auto ctx = context();
  ptwr::DetachResult result = detach_shared(ctx, kL1, slot_of(kSpareL1, 0), 0x200000);
  EXPECT_FALSE(result.detached);
  EXPECT_EQ(result.declined, ptwr::Decline::shared_reachable);
  EXPECT_TRUE(read(kL2, 0).present()) << "never unhooked";
  EXPECT_FALSE(ctx.effects.any());
  EXPECT_AUDIT_CLEAN();
}

// The other CPUs are flushed after the mapping is read-only again and before the comparison:
// a store another CPU made through its stale writable translation before it took the flush is
// compared, and validated (or refused), like any other.
TEST_F(PtwrSeveralCpusTest, ReattachFlushesTheOtherCpusBetweenTheReadOnlyMappingAndTheComparison) {
  auto ctx = context();
  ASSERT_TRUE(detach_shared(ctx, kSpareL1, slot_of(kL1, 10), 0xa000).detached);
  EXPECT_TRUE(read(kL1, 10).writable());
  write(kSpareL1, 5, ro(kLooseData + 2));
  flushes_.meanwhile = [this] {
    write(kSpareL1, 6, ro(kLooseData + 3));  // a late store, before this CPU took the IPI
    write(kSpareL1, 7, rw(kL2));             // and a forbidden one
  };
  const uint64_t before = frames_.flush_clock().now();
  auto ctx2 = context();
  ptwr::ReattachStats stats = wp_.reattach_all(ctx2);
  EXPECT_EQ(flushes_.calls, 1u);
  EXPECT_FALSE(flushes_.mapping_writable_then) << "read-only before the other CPUs are flushed";
  EXPECT_FALSE(flushes_.this_cpu_too) << "this CPU's vCPU is not running: its invlpg is an effect";
  EXPECT_GE(flushes_.stamp, before) << "the clock read after the store";
  EXPECT_EQ(stats.changed, 3u) << "the late stores were compared too";
  EXPECT_EQ(stats.revalidated, 2u);
  EXPECT_EQ(stats.refused, 1u);
  EXPECT_FALSE(read(kSpareL1, 7).present());
  EXPECT_EQ(info(kLooseData + 3).general_refs(), 2u) << "mapped by the late store";
  EXPECT_TRUE(ctx2.effects.invalidate_page_local || ctx2.effects.flush_local_tlb);
  EXPECT_AUDIT_CLEAN();
}

// An unlink some CPU applied without a full flush: every CPU of the domain (this one too) that
// has not flushed since is flushed before the mapping turns writable.
TEST_F(PtwrSeveralCpusTest, DetachAfterAnUnlinkFlushesEveryCpuFirst) {
  frames_.flush_clock().full_flush(0);
  const uint64_t stamp = frames_.flush_clock().now();
  wp_.note_tables_unlinked_at(stamp);
  wp_.note_tables_unlinked_at(stamp - 1);
  EXPECT_EQ(wp_.unlinked_stamp(), stamp) << "the latest is kept";
  auto ctx = context();
  ASSERT_TRUE(detach_shared(ctx, kSpareL1, slot_of(kL1, 10), 0xa000).detached);
  EXPECT_EQ(flushes_.calls, 1u);
  EXPECT_EQ(flushes_.stamp, stamp);
  EXPECT_TRUE(flushes_.this_cpu_too);
  EXPECT_FALSE(flushes_.mapping_writable_then) << "flushed before the mapping turned writable";
  EXPECT_TRUE(read(kL1, 10).writable());
  auto ctx2 = context();
  wp_.reattach_all(ctx2);
  EXPECT_AUDIT_CLEAN();
}

// A vCPU's MMU operation in a domain on several CPUs counts as a foreign use while it runs
// (the glue's MmuOperation): it may link the table or load a base pointer reaching it.
TEST_F(PtwrSeveralCpusTest, NoDetachWhileAnMmuOperationRuns) {
  wp_.begin_foreign_use();
  auto ctx = context();
  ptwr::DetachResult result = detach_shared(ctx, kSpareL1, slot_of(kL1, 10), 0xa000);
  EXPECT_FALSE(result.detached);
  EXPECT_EQ(result.declined, ptwr::Decline::foreign_use);
  wp_.end_foreign_use();
  auto ctx2 = context();
  EXPECT_TRUE(detach_shared(ctx2, kSpareL1, slot_of(kL1, 10), 0xa000).detached);
  auto ctx3 = context();
  wp_.reattach_all(ctx3);
  EXPECT_AUDIT_CLEAN();
}
}  // namespace
}  // namespace mm::testing
