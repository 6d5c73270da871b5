#include "mm_test_fixture.h"

namespace mm::testing {
namespace {

using MmPin = MmuTest;

TEST_F(MmPin, PinningAnL4ValidatesTheWholeTree) {
  build_tree();
  ASSERT_EQ(pin(kL4, MMUEXT_PIN_L4_TABLE), 0);

  EXPECT_TRUE(info(kL4).pinned());
  EXPECT_TRUE(info(kL4).has_type(PageType::L4) && info(kL4).validated());
  EXPECT_EQ(info(kL4).type_refs(), 1u);
  EXPECT_EQ(info(kL4).general_refs(), 2u) << "allocation + pin";
  for (auto [mfn, type] : {std::pair{kL3, PageType::L3}, {kL2, PageType::L2}, {kL1, PageType::L1}}) {
    EXPECT_TRUE(info(mfn).has_type(type) && info(mfn).validated()) << mfn;
    EXPECT_EQ(info(mfn).type_refs(), 1u) << mfn;
    EXPECT_EQ(info(mfn).general_refs(), 2u) << mfn;
    EXPECT_FALSE(info(mfn).pinned());
  }
  for (unsigned i = 0; i < 10; ++i) {
    EXPECT_EQ(info(kData + i).general_refs(), 2u) << i;
    EXPECT_EQ(info(kData + i).type_refs(), i < 5 ? 1u : 0u) << i;
    if (i < 5) {
      EXPECT_TRUE(info(kData + i).has_type(PageType::Writable));
    }
  }
  EXPECT_AUDIT_CLEAN();
}

TEST_F(MmPin, ValidationAdjustsEntriesAndFillsHypervisorSlots) {
  build_tree();
  write(kL4, 260, link(kLooseData));                // guest junk in a hypervisor slot is ignored
  write(kL1, 20, E::from_mfn(kData, E::kPresent));  // kernel mapping, no User
  ASSERT_EQ(pin(kL4, MMUEXT_PIN_L4_TABLE), 0);
  EXPECT_EQ(info(kLooseData).general_refs(), 1u) << "hypervisor slots hold no refs";
  for (unsigned slot = kFirstHypervisorSlot; slot <= kLastHypervisorSlot; ++slot)
    EXPECT_EQ(read(kL4, slot), slots_.slot(slot)) << slot;
  EXPECT_TRUE(read(kL1, 20).user());
  EXPECT_TRUE(read(kL1, 20).has(kGuestKernelMarker));
  EXPECT_TRUE(read(kL2, 0).user());
  EXPECT_TRUE(read(kL4, 0).accessed());
  EXPECT_AUDIT_CLEAN();
}

TEST_F(MmPin, UnpinReleasesEverything) {
  build_tree();
  auto before = snapshot();
  ASSERT_EQ(pin(kL4, MMUEXT_PIN_L4_TABLE), 0);
  ASSERT_EQ(unpin(kL4), 0);
  EXPECT_COUNTS_UNCHANGED(before);
  for (uint64_t mfn : {kL4, kL3, kL2, kL1}) EXPECT_FALSE(info(mfn).validated()) << mfn;
  EXPECT_AUDIT_CLEAN();
}

// An L1's teardown reads its tables block by block (mm/table_validation.cpp): entries at the
// edges of blocks and lines, read-only and writable, a read-only mapping of the table itself and
// I/O memory (which holds nothing) all give back exactly what validation took.
TEST_F(MmPin, UnpinningAnL1ReleasesTheEntriesOfEveryBlock) {
  constexpr uint64_t kIoApic = 0xfec00;
  write(kL1, 7, rw(kLooseData));
  write(kL1, 8, ro(kLooseData));
  write(kL1, 63, ro(kLooseData + 1));
  write(kL1, 64, rw(kLooseData + 2));
  write(kL1, 200, ro(kL1));
  write(kL1, 300, ro(kIoApic));
  write(kL1, 511, rw(kLooseData + 3));
  auto before = snapshot();
  mmuext_op_t op{};
  op.cmd = MMUEXT_PIN_L1_TABLE;
  op.arg1.mfn = kL1;
  auto privileged = context(DomainIdentity{kGuest, true, false});  // may map the IO-APIC
  ASSERT_EQ(mmuext_op(privileged, bases_, op), 0);
  EXPECT_EQ(info(kLooseData).general_refs(), 3u) << "allocation + two entries";
  EXPECT_EQ(info(kLooseData).type_refs(), 1u) << "one of them RW";
  EXPECT_EQ(info(kLooseData + 3).type_refs(), 1u);
  EXPECT_EQ(info(kL1).general_refs(), 3u) << "allocation + pin + its own read-only mapping";
  EXPECT_AUDIT_CLEAN();
  ASSERT_EQ(unpin(kL1), 0);
  EXPECT_FALSE(info(kL1).validated());
  EXPECT_COUNTS_UNCHANGED(before);
  EXPECT_AUDIT_CLEAN();
}

TEST_F(MmPin, PinsNestAndInnerPinsKeepSubtreesValidated) {
  build_tree();
  ASSERT_EQ(pin(kL1, MMUEXT_PIN_L1_TABLE), 0);
  ASSERT_EQ(pin(kL4, MMUEXT_PIN_L4_TABLE), 0);
  EXPECT_EQ(info(kL1).type_refs(), 2u) << "pin + L2 entry";
  EXPECT_AUDIT_CLEAN();
  ASSERT_EQ(unpin(kL4), 0);
  EXPECT_TRUE(info(kL1).has_type(PageType::L1) && info(kL1).validated());
  EXPECT_FALSE(info(kL2).validated());
  EXPECT_EQ(info(kData).type_refs(), 1u) << "still mapped RW by the pinned L1";
  EXPECT_AUDIT_CLEAN();
}

TEST_F(MmPin, RepinningAndWrongLevelAreRefused) {
  build_tree();
  ASSERT_EQ(pin(kL4, MMUEXT_PIN_L4_TABLE), 0);
  auto before = snapshot();
  EXPECT_EQ(pin(kL4, MMUEXT_PIN_L4_TABLE), -XEN_EINVAL);
  EXPECT_COUNTS_UNCHANGED(before);
  EXPECT_EQ(pin(kL4, MMUEXT_PIN_L3_TABLE), -XEN_EINVAL);
  EXPECT_EQ(pin(kL2, MMUEXT_PIN_L1_TABLE), -XEN_EINVAL);
  EXPECT_EQ(pin(kData, MMUEXT_PIN_L1_TABLE), -XEN_EINVAL) << "mapped writable";
  EXPECT_COUNTS_UNCHANGED(before);
  EXPECT_AUDIT_CLEAN();
}

TEST_F(MmPin, UnpinOfUnpinnedOrForeignFrameIsRefused) {
  build_tree();
  ASSERT_EQ(pin(kL4, MMUEXT_PIN_L4_TABLE), 0);
  auto before = snapshot();
  EXPECT_EQ(unpin(kL3), -XEN_EINVAL) << "validated but not pinned";
  EXPECT_EQ(unpin(kLooseData), -XEN_EINVAL);
  EXPECT_EQ(unpin(kForeign), -XEN_EINVAL);
  EXPECT_EQ(unpin(kFreeFrame), -XEN_EINVAL);
  EXPECT_EQ(unpin(kFrames + 100), -XEN_EINVAL);
  EXPECT_COUNTS_UNCHANGED(before);
  EXPECT_AUDIT_CLEAN();
}

TEST_F(MmPin, PinningFramesThatAreNotTheDomainsIsRefused) {
  auto before = snapshot();
  EXPECT_EQ(pin(kForeign, MMUEXT_PIN_L1_TABLE), -XEN_EINVAL);
  EXPECT_EQ(pin(kHypervisorFrame, MMUEXT_PIN_L1_TABLE), -XEN_EINVAL);
  EXPECT_EQ(pin(kFreeFrame, MMUEXT_PIN_L1_TABLE), -XEN_EINVAL);
  EXPECT_EQ(pin(kFrames + 1, MMUEXT_PIN_L4_TABLE), -XEN_EINVAL);
  EXPECT_COUNTS_UNCHANGED(before);
}

// One bad entry anywhere below the root: the pin fails with the rule's error and every
// count in the machine is exactly as before.
struct Refusal {
  const char* name;
  uint64_t table;
  unsigned index;
  E entry;
  int expected;
};

TEST_F(MmPin, EveryValidationRuleRefusesAndRollsBack) {
  const Refusal refusals[] = {
      {"RW mapping of a page table", kL1, 50, rw(kL2), -XEN_EBUSY},
      {"RW mapping of the L1 itself", kL1, 50, rw(kL1), -XEN_EBUSY},
      {"mapping of a hypervisor frame", kL1, 50, ro(kHypervisorFrame), -XEN_EBUSY},
      {"mapping of the M2P frame", kL1, 50, ro(kM2pFrame), -XEN_EBUSY},
      {"mapping of another guest's frame", kL1, 50, ro(kForeign), -XEN_EBUSY},
      {"mapping of a free frame", kL1, 50, ro(kFreeFrame), -XEN_EBUSY},
      {"mapping beyond the frame table", kL1, 50, ro(kFrames + 10), -XEN_EPERM},
      {"address bits 51:40 in L1 (not RAM: I/O rules)", kL1, 50, E(ro(kLooseData).raw() | (uint64_t{1} << 44)),
       -XEN_EPERM},
      {"reserved address bits in L2", kL2, 50, E(link(kSpareL1).raw() | (uint64_t{1} << 44)), -XEN_EINVAL},
      {"cache-disable in L1", kL1, 50, ro(kLooseData).with_flags(E::kCacheDisable), -XEN_EINVAL},
      {"superpage in L2", kL2, 7, link(kSpareL1).with_flags(E::kPageSize), -XEN_EINVAL},
      {"superpage in L3", kL3, 7, link(kSpareL2).with_flags(E::kPageSize), -XEN_EINVAL},
      {"PS in L4", kL4, 7, link(kSpareL3).with_flags(E::kPageSize), -XEN_EINVAL},
      {"global in L2", kL2, 7, link(kSpareL1).with_flags(E::kGlobal), -XEN_EINVAL},
      {"reserved address bits in L3", kL3, 7, E(link(kSpareL2).raw() | (uint64_t{1} << 50)), -XEN_EINVAL},
      {"L2 linking another guest's frame", kL2, 7, link(kForeign), -XEN_EINVAL},
      {"L2 linking a hypervisor frame", kL2, 7, link(kHypervisorFrame), -XEN_EINVAL},
      {"L2 linking a frame beyond the table", kL2, 7, link(kFrames + 3), -XEN_EINVAL},
      {"L2 linking an L2 (wrong level)", kL2, 7, link(kL2), -XEN_EINVAL},
      {"L3 linking a writable data frame", kL3, 7, link(kData), -XEN_EINVAL},
      {"L4 linking itself", kL4, 7, link(kL4), -XEN_EINVAL},
  };
  build_tree();
  for (const Refusal& refusal : refusals) {
    SCOPED_TRACE(refusal.name);
    auto before = snapshot();
    E saved = read(refusal.table, refusal.index);
    write(refusal.table, refusal.index, refusal.entry);
    EXPECT_EQ(pin(kL4, MMUEXT_PIN_L4_TABLE), refusal.expected);
    EXPECT_COUNTS_UNCHANGED(before);
    EXPECT_FALSE(info(kL4).pinned());
    EXPECT_EQ(read(refusal.table, refusal.index), refusal.entry) << "memory untouched";
    EXPECT_AUDIT_CLEAN();
    write(refusal.table, refusal.index, saved);
  }
  EXPECT_EQ(pin(kL4, MMUEXT_PIN_L4_TABLE), 0) << "the tree itself is fine";
  EXPECT_AUDIT_CLEAN();
}

TEST_F(MmPin, FailureDeepInTheSecondSubtreeRollsBackTheFirst) {
  build_tree();
  // A second, complete branch kL4[1] -> kSpareL3 -> kSpareL2 -> kSpareL1 whose last L1
  // entry (index 511) is bad, after many good ones.
  write(kL4, 1, link(kSpareL3));
  write(kSpareL3, 0, link(kSpareL2));
  write(kSpareL2, 0, link(kSpareL1));
  for (unsigned i = 0; i < 10; ++i) write(kSpareL1, 100 + i, rw(kLooseData + i));
  write(kSpareL1, 511, rw(kL1));
  auto before = snapshot();
  EXPECT_EQ(pin(kL4, MMUEXT_PIN_L4_TABLE), -XEN_EBUSY);
  EXPECT_COUNTS_UNCHANGED(before);
  for (uint64_t mfn : {kL4, kL3, kL2, kL1, kSpareL3, kSpareL2, kSpareL1}) EXPECT_EQ(info(mfn).type_refs(), 0u) << mfn;
  EXPECT_AUDIT_CLEAN();
}

// As Xen validates a table (get_page_from_l1e with the table's owner as page owner): an L1
// that maps another domain's frame cannot be pinned, not even by a privileged domain. Foreign
// frames enter an L1 only through mmu_update with foreigndom.
TEST_F(MmPin, NoDomainPinsAnL1MappingOtherGuestsFrames) {
  write(kSpareL1, 0, rw(kForeign));
  mmuext_op_t op{};
  op.cmd = MMUEXT_PIN_L1_TABLE;
  op.arg1.mfn = kSpareL1;
  auto unprivileged = context();
  EXPECT_EQ(mmuext_op(unprivileged, bases_, op), -XEN_EBUSY);
  auto privileged = context(DomainIdentity{kGuest, true, false});
  EXPECT_EQ(mmuext_op(privileged, bases_, op), -XEN_EBUSY);
  EXPECT_EQ(info(kForeign).general_refs(), 1u);
  EXPECT_AUDIT_CLEAN();
  write(kSpareL1, 0, ro(kHypervisorFrame));
  EXPECT_EQ(mmuext_op(privileged, bases_, op), -XEN_EBUSY) << "never hypervisor frames";
  EXPECT_AUDIT_CLEAN();
}

TEST_F(MmPin, SharedSubtreesAreCountedOncePerLink) {
  build_tree();
  write(kL4, 5, link(kL3));  // the same L3 under two slots
  write(kL2, 1, link(kL1));  // the same L1 under two L2 slots
  ASSERT_EQ(pin(kL4, MMUEXT_PIN_L4_TABLE), 0);
  EXPECT_EQ(info(kL3).type_refs(), 2u);
  EXPECT_EQ(info(kL1).type_refs(), 2u);
  EXPECT_EQ(info(kData).general_refs(), 2u) << "the L1 is validated once";
  EXPECT_AUDIT_CLEAN();
  ASSERT_EQ(unpin(kL4), 0);
  EXPECT_EQ(info(kL1).type_refs(), 0u);
  EXPECT_AUDIT_CLEAN();
}

}  // namespace
}  // namespace mm::testing
