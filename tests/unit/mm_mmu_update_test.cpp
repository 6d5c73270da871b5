#include "mm_test_fixture.h"

namespace mm::testing {
namespace {

class MmMmuUpdate : public MmuTest {
 protected:
  void SetUp() override {
    build_tree();
    ASSERT_EQ(pin(kL4, MMUEXT_PIN_L4_TABLE), 0);
  }
};

TEST_F(MmMmuUpdate, NewL1EntryTakesRefsAndOldOneReleasesThem) {
  ASSERT_EQ(update(kL1, 100, rw(kLooseData)), 0);
  EXPECT_EQ(info(kLooseData).general_refs(), 2u);
  EXPECT_TRUE(info(kLooseData).has_type(PageType::Writable));
  EXPECT_TRUE(read(kL1, 100).present());
  EXPECT_AUDIT_CLEAN();

  ASSERT_EQ(update(kL1, 100, ro(kLooseData + 1)), 0);
  EXPECT_EQ(info(kLooseData).general_refs(), 1u);
  EXPECT_EQ(info(kLooseData).type_refs(), 0u);
  EXPECT_EQ(info(kLooseData + 1).general_refs(), 2u);
  EXPECT_AUDIT_CLEAN();

  ASSERT_EQ(update(kL1, 100, E()), 0);
  EXPECT_EQ(info(kLooseData + 1).general_refs(), 1u);
  EXPECT_EQ(read(kL1, 100), E());
  EXPECT_AUDIT_CLEAN();
}

TEST_F(MmMmuUpdate, DowngradingRwToRoDropsOnlyTheWritableType) {
  ASSERT_EQ(info(kData).type_refs(), 1u);
  ASSERT_EQ(update(kL1, 0, ro(kData)), 0);
  EXPECT_EQ(info(kData).type_refs(), 0u);
  EXPECT_EQ(info(kData).general_refs(), 2u);
  EXPECT_AUDIT_CLEAN();
  EXPECT_EQ(pin(kData, MMUEXT_PIN_L1_TABLE), 0) << "no writable mapping left";
  EXPECT_AUDIT_CLEAN();
}

// RW flipped on the same frame keeps the general reference and takes or drops only the
// Writable type (update_table_entry's short path): the counts are those of a full release and
// retake, and every refusal of the full path still holds.
TEST_F(MmMmuUpdate, FlippingRwOnTheSameFrameMovesOnlyTheWritableType) {
  ASSERT_EQ(update(kL1, 100, ro(kLooseData)), 0);
  ASSERT_EQ(info(kLooseData).general_refs(), 2u);
  for (int round = 0; round < 3; ++round) {
    ASSERT_EQ(update(kL1, 100, rw(kLooseData).with_flags(E::kDirty)), 0);
    EXPECT_EQ(info(kLooseData).general_refs(), 2u);
    EXPECT_EQ(info(kLooseData).type_refs(), 1u);
    EXPECT_TRUE(info(kLooseData).has_type(PageType::Writable));
    EXPECT_TRUE(read(kL1, 100).writable());
    EXPECT_AUDIT_CLEAN();
    ASSERT_EQ(update(kL1, 100, ro(kLooseData)), 0);
    EXPECT_EQ(info(kLooseData).general_refs(), 2u);
    EXPECT_EQ(info(kLooseData).type_refs(), 0u);
    EXPECT_FALSE(read(kL1, 100).writable());
    EXPECT_AUDIT_CLEAN();
  }
}

TEST_F(MmMmuUpdate, FlippingRwKeepsTheRefusals) {
  // A page table mapped read-only may not become writable.
  ASSERT_EQ(update(kL1, 101, ro(kL2)), 0);
  auto before = snapshot();
  EXPECT_EQ(update(kL1, 101, rw(kL2)), -XEN_EBUSY);
  EXPECT_FALSE(read(kL1, 101).writable());
  EXPECT_COUNTS_UNCHANGED(before);
  EXPECT_AUDIT_CLEAN();

  // Another guest's frame mapped through foreigndom: the caller's own page owner may not
  // touch it, RW flip or not.
  const DomainIdentity privileged{kGuest, true, false};
  ASSERT_EQ(update_as(kL1, 102, ro(kForeign), kOtherGuest, privileged), 0);
  before = snapshot();
  EXPECT_EQ(update(kL1, 102, rw(kForeign), MMU_NORMAL_PT_UPDATE, privileged), -XEN_EBUSY);
  EXPECT_COUNTS_UNCHANGED(before);
  ASSERT_EQ(update_as(kL1, 102, rw(kForeign), kOtherGuest, privileged), 0);
  EXPECT_TRUE(info(kForeign).has_type(PageType::Writable));
  EXPECT_AUDIT_CLEAN();
  ASSERT_EQ(update_as(kL1, 102, ro(kForeign), kOtherGuest, privileged), 0);
  EXPECT_EQ(info(kForeign).type_refs(), 0u);
  EXPECT_AUDIT_CLEAN();
}

TEST_F(MmMmuUpdate, HarmlessFlagChangesKeepCounts) {
  auto before = snapshot();
  ASSERT_EQ(update(kL1, 0, rw(kData).with_flags(E::kDirty | E::kNoExecute)), 0);
  EXPECT_TRUE(read(kL1, 0).dirty() && read(kL1, 0).nx());
  ASSERT_EQ(update(kL2, 0, link(kL1).without_flags(E::kWritable)), 0);
  EXPECT_FALSE(read(kL2, 0).writable());
  EXPECT_COUNTS_UNCHANGED(before);
  EXPECT_AUDIT_CLEAN();
}

TEST_F(MmMmuUpdate, PreserveAccessedDirtyKeepsHardwareBits) {
  write(kL1, 0, rw(kData).with_flags(E::kDirty));
  ASSERT_EQ(update(kL1, 0, rw(kData).without_flags(E::kAccessed), MMU_PT_UPDATE_PRESERVE_AD), 0);
  EXPECT_TRUE(read(kL1, 0).dirty() && read(kL1, 0).accessed());
  ASSERT_EQ(update(kL1, 0, rw(kData).without_flags(E::kAccessed)), 0);
  EXPECT_FALSE(read(kL1, 0).dirty() || read(kL1, 0).accessed());
  EXPECT_AUDIT_CLEAN();
}

TEST_F(MmMmuUpdate, LinkingANewL1ValidatesItAndUnlinkingDevalidatesIt) {
  write(kSpareL1, 3, rw(kLooseData));
  ASSERT_EQ(update(kL2, 1, link(kSpareL1)), 0);
  EXPECT_TRUE(info(kSpareL1).has_type(PageType::L1) && info(kSpareL1).validated());
  EXPECT_TRUE(info(kLooseData).has_type(PageType::Writable));
  EXPECT_AUDIT_CLEAN();
  ASSERT_EQ(update(kL2, 1, E()), 0);
  EXPECT_EQ(info(kSpareL1).type_refs(), 0u);
  EXPECT_FALSE(info(kSpareL1).validated());
  EXPECT_EQ(info(kLooseData).general_refs(), 1u);
  EXPECT_AUDIT_CLEAN();
}

TEST_F(MmMmuUpdate, ReplacingAnL4EntryMovesTheWholeSubtree) {
  write(kSpareL3, 0, link(kSpareL2));
  write(kSpareL2, 0, link(kSpareL1));
  write(kSpareL1, 0, ro(kLooseData));
  auto ctx = context();
  mmu_update_t request{(kL4 << kPageShift) + 0 * 8, link(kSpareL3).raw()};
  ASSERT_EQ(mmu_update(ctx, request), 0);
  EXPECT_TRUE(ctx.effects.l4_entry_changed);
  for (uint64_t mfn : {kL3, kL2, kL1}) EXPECT_EQ(info(mfn).type_refs(), 0u) << mfn;
  for (uint64_t mfn : {kSpareL3, kSpareL2, kSpareL1}) EXPECT_EQ(info(mfn).type_refs(), 1u) << mfn;
  EXPECT_EQ(info(kData).general_refs(), 1u);
  EXPECT_EQ(info(kLooseData).general_refs(), 2u);
  EXPECT_AUDIT_CLEAN();
}

// An update of a validated table takes no reference of the table's own (mmu_update.h): its type
// references hold it. Here the table's only holder is its pin (the allocation given back) and
// the entry updated maps the table itself: releasing that mapping drops a general reference
// of the table while it is being updated, and the frame must stay, with the counts the audit
// expects, until the unpin frees it.
TEST_F(MmMmuUpdate, ATableHeldOnlyByItsPinSurvivesTheUpdateOfAnEntryMappingItself) {
  ASSERT_EQ(pin(kSpareL1, MMUEXT_PIN_L1_TABLE), 0);
  ASSERT_EQ(update(kSpareL1, 7, ro(kSpareL1)), 0);
  EXPECT_EQ(info(kSpareL1).general_refs(), 3u);  // allocation, pin, its own read-only mapping
  drop_allocation(frames_, kSpareL1);
  EXPECT_AUDIT_CLEAN();
  ASSERT_EQ(update(kSpareL1, 7, E()), 0);
  EXPECT_FALSE(info(kSpareL1).is_free());
  EXPECT_EQ(info(kSpareL1).general_refs(), 1u);
  EXPECT_TRUE(info(kSpareL1).is_validated_table());
  EXPECT_AUDIT_CLEAN();
  ASSERT_EQ(update(kSpareL1, 8, ro(kLooseData)), 0) << "still the domain's table";
  ASSERT_EQ(update(kSpareL1, 8, E()), 0);
  ASSERT_EQ(unpin(kSpareL1), 0);
  EXPECT_TRUE(info(kSpareL1).is_free());
  EXPECT_EQ(update(kSpareL1, 8, ro(kLooseData)), -XEN_EINVAL) << "a freed frame is no table of the domain's";
  EXPECT_AUDIT_CLEAN();
}

// The same short path refuses a validated table of another domain, as get_page did.
TEST_F(MmMmuUpdate, AnotherDomainsValidatedTableIsRefused) {
  auto foreign = context(DomainIdentity{kOtherGuest, false, false});
  write(kForeign, 0, E());
  mmuext_op_t op{};
  op.cmd = MMUEXT_PIN_L1_TABLE;
  op.arg1.mfn = kForeign;
  ASSERT_EQ(mmuext_op(foreign, bases_, op), 0);
  ASSERT_TRUE(info(kForeign).is_validated_table());
  EXPECT_EQ(update(kForeign, 0, ro(kLooseData)), -XEN_EINVAL);
  EXPECT_EQ(read(kForeign, 0), E());
}

TEST_F(MmMmuUpdate, RefusalsLeaveCountsAndMemoryUnchanged) {
  struct Case {
    const char* name;
    uint64_t table;
    unsigned index;
    E entry;
    int expected;
  };
  const Case cases[] = {
      {"RW mapping of a page table", kL1, 100, rw(kL3), -XEN_EBUSY},
      {"RW mapping of the table itself", kL1, 100, rw(kL1), -XEN_EBUSY},
      {"foreign frame", kL1, 100, ro(kForeign), -XEN_EBUSY},
      {"hypervisor frame", kL1, 100, ro(kHypervisorFrame), -XEN_EBUSY},
      {"beyond the frame table", kL1, 100, ro(kFrames), -XEN_EPERM},
      {"address bits 51:40 (not RAM, no I/O access)", kL1, 100, E(ro(kLooseData).raw() | (uint64_t{1} << 40)),
       -XEN_EPERM},
      {"reserved bits in L2", kL2, 100, E(link(kSpareL1).raw() | (uint64_t{1} << 40)), -XEN_EINVAL},
      {"PAT bit in L1", kL1, 100, ro(kLooseData).with_flags(E::kPageSize), -XEN_EINVAL},
      {"superpage in L2", kL2, 100, link(kLooseData).with_flags(E::kPageSize), -XEN_EINVAL},
      {"superpage in L3", kL3, 100, link(kLooseData).with_flags(E::kPageSize), -XEN_EINVAL},
      {"PS in L4", kL4, 100, link(kSpareL3).with_flags(E::kPageSize), -XEN_EINVAL},
      {"L2 linking a writable frame", kL2, 100, link(kData), -XEN_EINVAL},
      {"L2 linking an L2", kL2, 100, link(kL2), -XEN_EINVAL},
      {"L3 linking a foreign frame", kL3, 100, link(kForeign), -XEN_EINVAL},
      {"L4 linking an L4", kL4, 100, link(kL4), -XEN_EINVAL},
      {"hypervisor slot 256 (M2P)", kL4, 256, E(), -XEN_EINVAL},
      {"hypervisor slot 256 remapped", kL4, 256, link(kSpareL3), -XEN_EINVAL},
      {"hypervisor slot 271", kL4, 271, link(kSpareL3), -XEN_EINVAL},
      {"a table of another domain", kForeign, 0, ro(kLooseData), -XEN_EINVAL},
      {"a hypervisor frame as table", kHypervisorFrame, 0, ro(kLooseData), -XEN_EINVAL},
      {"a free frame as table", kFreeFrame, 0, ro(kLooseData), -XEN_EINVAL},
      {"beyond the frame table as table", kFrames + 2, 0, ro(kLooseData), -XEN_EINVAL},
  };
  // A new L1 with a bad entry deep inside: linking it fails and is rolled back.
  write(kSpareL1, 0, rw(kLooseData));
  write(kSpareL1, 400, rw(kL2));
  auto before = snapshot();
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    E old = c.table < kFrames ? read(c.table, c.index) : E();
    EXPECT_EQ(update(c.table, c.index, c.entry), c.expected);
    EXPECT_COUNTS_UNCHANGED(before);
    if (c.table < kFrames) {
      EXPECT_EQ(read(c.table, c.index), old);
    }
    EXPECT_AUDIT_CLEAN();
  }
  EXPECT_EQ(update(kL2, 100, link(kSpareL1)), -XEN_EBUSY);
  EXPECT_COUNTS_UNCHANGED(before);
  EXPECT_AUDIT_CLEAN();
}

TEST_F(MmMmuUpdate, UpdatesOfNonTableFramesArePlainWrites) {
  auto before = snapshot();
  ASSERT_EQ(update(kLooseData, 7, E(0xdeadbeef)), 0);
  EXPECT_EQ(read(kLooseData, 7).raw(), 0xdeadbeefu);
  ASSERT_EQ(update(kData, 8, E(0x1234)), 0) << "a mapped writable frame";
  EXPECT_EQ(read(kData, 8).raw(), 0x1234u);
  ASSERT_EQ(update(kSpareL1, 8, rw(kL4)), 0) << "unvalidated table frame: data";
  EXPECT_COUNTS_UNCHANGED(before);
  EXPECT_AUDIT_CLEAN();
}

TEST_F(MmMmuUpdate, MachPhysUpdate) {
  mmu_update_t request{(kLooseData << kPageShift) | MMU_MACHPHYS_UPDATE, 0x777};
  auto ctx = context();
  ASSERT_EQ(mmu_update(ctx, request), 0);
  EXPECT_EQ(m2p_[kLooseData], 0x777u);
  auto before = snapshot();
  for (uint64_t mfn : {kForeign, kHypervisorFrame, kFreeFrame, kFrames + 1}) {
    request.ptr = (mfn << kPageShift) | MMU_MACHPHYS_UPDATE;
    EXPECT_EQ(mmu_update(ctx, request), -XEN_EINVAL) << mfn;
    if (mfn < kFrames) {
      EXPECT_EQ(m2p_[mfn], ~uint64_t{0});
    }
  }
  EXPECT_COUNTS_UNCHANGED(before);
  MmuContext short_m2p{frames_, DomainIdentity{kGuest, false, false}, slots_, MachToPhysTable{m2p_.data(), kLooseData}};
  request.ptr = (kLooseData << kPageShift) | MMU_MACHPHYS_UPDATE;
  EXPECT_EQ(mmu_update(short_m2p, request), -XEN_EINVAL) << "beyond the M2P";
  EXPECT_COUNTS_UNCHANGED(before);
}

TEST_F(MmMmuUpdate, UnknownCommandIsNotImplemented) {
  auto before = snapshot();
  for (uint64_t command : {4, 5, 6, 7})
    EXPECT_EQ(update(kL1, 100, ro(kLooseData), static_cast<unsigned>(command)), -XEN_ENOSYS);
  EXPECT_COUNTS_UNCHANGED(before);
}

TEST_F(MmMmuUpdate, BatchStopsAtTheFirstFailure) {
  mmu_update_t requests[] = {
      {(kL1 << kPageShift) + 100 * 8, ro(kLooseData).raw()},
      {(kL1 << kPageShift) + 101 * 8, rw(kLooseData + 1).raw()},
      {(kL1 << kPageShift) + 102 * 8, rw(kL1).raw()},
      {(kL1 << kPageShift) + 103 * 8, ro(kLooseData + 3).raw()},
  };
  unsigned done = 99;
  auto ctx = context();
  EXPECT_EQ(mmu_update_batch(ctx, requests, 4, &done), -XEN_EBUSY);
  EXPECT_EQ(done, 2u);
  EXPECT_EQ(info(kLooseData + 1).type_refs(), 1u);
  EXPECT_EQ(info(kLooseData + 3).general_refs(), 1u);
  EXPECT_AUDIT_CLEAN();
  EXPECT_EQ(mmu_update_batch(ctx, requests, 2, &done), 0) << "rewriting the same entries";
  EXPECT_EQ(done, 2u);
  EXPECT_AUDIT_CLEAN();
}

// A batch alternating between two L1s, as a fork does between the parent's and the child's
// table (each request locks its own table): one entry of the second maps the first read-only
// and drops it again, with the counts after each step.
TEST_F(MmMmuUpdate, ABatchAlternatingBetweenTwoTablesTakesEveryReference) {
  ASSERT_EQ(update(kL2, 1, link(kSpareL1)), 0);
  auto slot = [](uint64_t table, unsigned index) { return (table << kPageShift) + index * 8; };
  mmu_update_t requests[] = {
      {slot(kL1, 100), ro(kLooseData).raw()},
      {slot(kSpareL1, 100), ro(kLooseData).raw()},
      {slot(kL1, 101), rw(kLooseData + 1).raw()},
      {slot(kSpareL1, 101), ro(kL1).raw()},
      {slot(kL1, 100), E().raw()},
      {slot(kSpareL1, 101), E().raw()},
      {slot(kL1, 0), ro(kData).raw()},
      {slot(kSpareL1, 102), rw(kData).raw()},
  };
  const uint32_t table_refs = info(kL1).general_refs();
  unsigned done = 0;
  auto ctx = context();
  ASSERT_EQ(mmu_update_batch(ctx, requests, 8, &done), 0);
  EXPECT_EQ(done, 8u);
  EXPECT_EQ(info(kLooseData).general_refs(), 2u);  // allocation, kSpareL1[100]
  EXPECT_EQ(info(kLooseData + 1).type_refs(), 1u);
  EXPECT_EQ(info(kL1).general_refs(), table_refs) << "the read-only mapping of kL1 was taken and dropped";
  EXPECT_EQ(read(kL1, 0), ro(kData));
  EXPECT_EQ(info(kData).type_refs(), 1u) << "writable in kSpareL1 once kL1 maps it read-only";
  EXPECT_AUDIT_CLEAN();
}

// An update of a higher-level table can end an L1 the batch has just written: here the L2 entry
// unlinks it, it is then no table, and the next request on it is a plain write that takes no
// references (had the batch kept treating it as a table, it would have taken a reference of
// kLooseData + 2 that no table entry accounts for).
TEST_F(MmMmuUpdate, ABatchThatUnlinksATableItWroteTreatsTheFrameAsDataAfter) {
  ASSERT_EQ(update(kL2, 1, link(kSpareL1)), 0);
  auto slot = [](uint64_t table, unsigned index) { return (table << kPageShift) + index * 8; };
  mmu_update_t requests[] = {
      {slot(kL1, 3), ro(kLooseData + 1).raw()},
      {slot(kSpareL1, 3), ro(kLooseData).raw()},
      {slot(kL2, 1), E().raw()},
      {slot(kSpareL1, 4), ro(kLooseData + 2).raw()},
  };
  unsigned done = 0;
  auto ctx = context();
  ASSERT_EQ(mmu_update_batch(ctx, requests, 4, &done), 0);
  EXPECT_EQ(done, 4u);
  EXPECT_FALSE(info(kSpareL1).is_validated_table());
  EXPECT_EQ(info(kSpareL1).type_refs(), 0u);
  EXPECT_EQ(info(kLooseData).general_refs(), 1u) << "released with the table";
  EXPECT_EQ(info(kLooseData + 2).general_refs(), 1u) << "a plain write takes no reference";
  EXPECT_EQ(read(kSpareL1, 4), ro(kLooseData + 2));
  EXPECT_AUDIT_CLEAN();
}

}  // namespace
// A privileged domain maps I/O memory (frames that are not RAM) as Xen lets dom0 do: no
// references are taken or dropped, and the audit stays clean. Others get -EPERM.
TEST_F(MmMmuUpdate, PrivilegedDomainMapsIoFramesWithoutReferences) {
  const DomainIdentity privileged{kGuest, true, false};
  const uint64_t io_frame = kFrames + 0x100;
  EXPECT_EQ(update(kL1, 100, rw(io_frame)), -XEN_EPERM);
  ASSERT_EQ(update(kL1, 100, rw(io_frame), MMU_NORMAL_PT_UPDATE, privileged), 0);
  EXPECT_EQ(read(kL1, 100).mfn(), io_frame);
  EXPECT_AUDIT_CLEAN();
  ASSERT_EQ(update(kL1, 100, E(), MMU_NORMAL_PT_UPDATE, privileged), 0);
  EXPECT_AUDIT_CLEAN();
  E beyond_address_width(rw(kLooseData).raw() | (uint64_t{1} << 45));
  EXPECT_EQ(update(kL1, 100, beyond_address_width, MMU_NORMAL_PT_UPDATE, privileged), -XEN_EPERM);
}

// Xen's l1_disallow_mask for a domain with I/O memory: its mappings of I/O memory may carry
// the cache attributes (PWT, PCD, PAT), as Linux's ioremap of the ACPI tables (UC-) needs; an
// unprivileged domain's may not, and neither may a mapping of RAM (not re-typed here).
TEST_F(MmMmuUpdate, CacheAttributesOnlyOnAPrivilegedDomainsIoMappings) {
  const DomainIdentity privileged{kGuest, true, false};
  const uint64_t io_frame = kFrames + 0x100;
  for (uint64_t bits : {E::kCacheDisable, E::kWriteThrough, E::kPageSize, E::kCacheDisable | E::kWriteThrough}) {
    ASSERT_EQ(update(kL1, 100, rw(io_frame).with_flags(bits), MMU_NORMAL_PT_UPDATE, privileged), 0);
    EXPECT_TRUE(read(kL1, 100).has_any(bits));
    EXPECT_EQ(update(kL1, 101, rw(io_frame).with_flags(bits)), -XEN_EINVAL);
    EXPECT_EQ(update(kL1, 101, ro(kLooseData).with_flags(bits), MMU_NORMAL_PT_UPDATE, privileged), -XEN_EINVAL);
    EXPECT_AUDIT_CLEAN();
  }
  ASSERT_EQ(update(kL1, 100, E(), MMU_NORMAL_PT_UPDATE, privileged), 0);
  EXPECT_AUDIT_CLEAN();
}

// Hypervisor frames shared with privileged domains (trace buffers) are mapped as Xen's dom0
// maps them, with foreigndom DOMID_XEN (the hypercall lets only privileged callers name it),
// read-only or writable, without references. As the caller's own page owner: refused.
TEST_F(MmMmuUpdate, SharedHypervisorFramesThroughDomidXen) {
  frames_.info(kHypervisorFrame).shared_with_privileged = true;
  const DomainIdentity privileged{kGuest, true, false};
  EXPECT_EQ(update(kL1, 100, ro(kHypervisorFrame)), -XEN_EBUSY);
  EXPECT_EQ(update(kL1, 100, ro(kHypervisorFrame), MMU_NORMAL_PT_UPDATE, privileged), -XEN_EBUSY);
  ASSERT_EQ(update_as(kL1, 100, rw(kHypervisorFrame), DOMID_XEN, privileged), 0);
  EXPECT_EQ(info(kHypervisorFrame).general_refs(), 1u) << "no reference taken";
  EXPECT_AUDIT_CLEAN();
  ASSERT_EQ(update_as(kL1, 100, E(), DOMID_XEN, privileged), 0);
  EXPECT_EQ(info(kHypervisorFrame).general_refs(), 1u);
  EXPECT_AUDIT_CLEAN();
  frames_.info(kHypervisorFrame + 1).shared_with_privileged = false;
  EXPECT_EQ(update_as(kL1, 100, ro(kHypervisorFrame + 1), DOMID_XEN, privileged), -XEN_EBUSY)
      << "hypervisor pages that are not shared";
  EXPECT_EQ(update_as(kL1, 100, ro(kData), DOMID_XEN, privileged), -XEN_EBUSY)
      << "with DOMID_XEN as page owner, not the caller's own frames";
  frames_.info(kHypervisorFrame + 1).shared_with_privileged = true;
  frames_.info(kHypervisorFrame + 1).shared_read_only = true;
  EXPECT_EQ(update_as(kL1, 100, rw(kHypervisorFrame + 1), DOMID_XEN, privileged), -XEN_EBUSY)
      << "shared read-only, as Xen shares t_info";
  ASSERT_EQ(update_as(kL1, 100, ro(kHypervisorFrame + 1), DOMID_XEN, privileged), 0);
  ASSERT_EQ(update(kL1, 100, E()), 0);
  EXPECT_AUDIT_CLEAN();
}

// foreigndom names another guest: its frames are mapped with references taken on them (the
// toolstack's way to reach a domain's memory), and only its frames.
TEST_F(MmMmuUpdate, ForeignGuestFramesThroughForeigndom) {
  const DomainIdentity privileged{kGuest, true, false};
  EXPECT_EQ(update(kL1, 100, rw(kForeign), MMU_NORMAL_PT_UPDATE, privileged), -XEN_EBUSY)
      << "not without foreigndom, as on Xen";
  ASSERT_EQ(update_as(kL1, 100, rw(kForeign), kOtherGuest, privileged), 0);
  EXPECT_EQ(info(kForeign).general_refs(), 2u);
  EXPECT_TRUE(info(kForeign).has_type(PageType::Writable));
  EXPECT_AUDIT_CLEAN();
  EXPECT_EQ(update_as(kL1, 101, rw(kData), kOtherGuest, privileged), -XEN_EBUSY);
  ASSERT_EQ(update(kL1, 100, E()), 0) << "clearing needs no page owner";
  EXPECT_EQ(info(kForeign).general_refs(), 1u);
  EXPECT_AUDIT_CLEAN();
}

}  // namespace mm::testing
