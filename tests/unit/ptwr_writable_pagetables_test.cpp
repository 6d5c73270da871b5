// Writable pagetables: detach (unhook when reachable), native writes, reattach with
// re-validation of the changed entries only, and the audit staying clean throughout.
#include "mm_test_fixture.h"
#include "ptwr/table_reachability.h"
#include "ptwr/writable_pagetables.h"

namespace mm::testing {
namespace {

class PtwrTest : public MmuTest {
protected:
    void SetUp() override {
        build_tree();                           // kL4 -> kL3 -> kL2[0] -> kL1 -> kData..
        write(kL2, 1, link(kSpareL1));          // kSpareL1 maps kL1 read-only: the guest's
        write(kSpareL1, 0, ro(kL1));            // mapping through which it writes kL1
        write(kL1, 10, ro(kSpareL1));           // and kL1 maps kSpareL1 read-only
        ASSERT_EQ(pin(kL4, MMUEXT_PIN_L4_TABLE), 0);
        mmuext_op_t base{};
        base.cmd = MMUEXT_NEW_BASEPTR;
        base.arg1.mfn = kL4;
        auto ctx = context();
        ASSERT_EQ(mmuext_op(ctx, bases_, base), 0);
        wp_.set_snapshot_storage(snapshot_active_.data(), snapshot_inactive_.data());
    }

    uint64_t slot_of(uint64_t table, unsigned index) { return (table << kPageShift) + index * 8; }

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
    ptwr::DetachResult detached = wp_.detach(ctx, bases_, kL1, slot_of(kSpareL1, 0), 0x5000);
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
    EXPECT_EQ(info(kData + 1).general_refs, 1u) << "removed mapping released its reference";
    EXPECT_FALSE(wp_.any_in_use());
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
    ptwr::DetachResult detached = wp_.detach(ctx, bases_, kSpareL1, slot_of(kL1, 10), 0x6000);
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
    EXPECT_EQ(info(kLooseData + 2).general_refs, 2u);
    EXPECT_AUDIT_CLEAN();
}

TEST_F(PtwrTest, IneligibleDetachesChangeNothing) {
    auto ctx = context();
    EXPECT_FALSE(wp_.detach(ctx, bases_, kL2, slot_of(kSpareL1, 0), 0x5000).detached) << "not an L1";
    EXPECT_FALSE(wp_.detach(ctx, bases_, kL1, slot_of(kSpareL1, 1), 0x5000).detached) << "entry maps nothing";
    EXPECT_FALSE(wp_.detach(ctx, bases_, kL1, slot_of(kL1, 10), 0x5000).detached) << "entry maps another frame";
    EXPECT_FALSE(wp_.detach(ctx, bases_, kLooseData, slot_of(kSpareL1, 0), 0x5000).detached) << "data frame";
    ptwr::WritablePagetables without_storage;
    EXPECT_FALSE(without_storage.detach(ctx, bases_, kL1, slot_of(kSpareL1, 0), 0x5000).detached);
    EXPECT_TRUE(read(kL2, 0).present());
    EXPECT_FALSE(read(kSpareL1, 0).writable());
    EXPECT_AUDIT_CLEAN();
}

TEST_F(PtwrTest, SecondActiveDetachEvictsTheFirst) {
    auto ctx = context();
    ASSERT_TRUE(wp_.detach(ctx, bases_, kL1, slot_of(kSpareL1, 0), 0x5000).detached);
    write(kL1, 30, ro(kLooseData + 4));
    // kSpareL1 is reachable too (kL2[1]); its mapping lives in kL1, which is detached: the
    // table being written is the mapping's table, so it must not be eligible until reattach.
    auto ctx2 = context();
    ptwr::DetachResult second = wp_.detach(ctx2, bases_, kSpareL1, slot_of(kL1, 10), 0x6000);
    EXPECT_TRUE(second.detached);
    EXPECT_EQ(second.evicted.reattached, 1u);
    EXPECT_EQ(second.evicted_table_mfn, kL1);
    EXPECT_EQ(second.evicted.revalidated, 1u);
    auto ctx3 = context();
    wp_.reattach_all(ctx3);
    EXPECT_AUDIT_CLEAN();
}

}  // namespace
}  // namespace mm::testing
