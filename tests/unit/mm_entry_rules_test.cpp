#include <gtest/gtest.h>

#include "mm/entry_rules.h"
#include "mm/page_table_entry.h"
#include "mm_test_fixture.h"

namespace mm {
namespace {

using E = PageTableEntry;
constexpr uint64_t kBasic = E::kPresent | E::kWritable | E::kUser | E::kAccessed;

TEST(MmPageTableEntry, AccessorsAndAddressField) {
  constexpr E entry = E::from_mfn(0x12345, kBasic | E::kDirty | E::kNoExecute);
  static_assert(entry.present() && entry.writable() && entry.user() && entry.accessed());
  static_assert(entry.dirty() && entry.nx() && !entry.global() && !entry.pse());
  static_assert(entry.mfn() == 0x12345);
  static_assert(entry.with_mfn(7).mfn() == 7 && entry.with_mfn(7).flags() == entry.flags());
  static_assert(!entry.without_flags(E::kWritable).writable());
  EXPECT_EQ(entry.raw(), (uint64_t{0x12345} << 12) | kBasic | E::kDirty | E::kNoExecute);
  EXPECT_FALSE(entry.reserved_address_bits());
  EXPECT_TRUE(E(uint64_t{1} << 40 | 1).reserved_address_bits());
  EXPECT_TRUE(E(uint64_t{1} << 51 | 1).reserved_address_bits());
  EXPECT_FALSE(E(uint64_t{1} << 52 | 1).reserved_address_bits());
}

TEST(MmPageTableEntry, TableIndexPerLevel) {
  constexpr uint64_t va = 0xffff888012345678ull;
  EXPECT_EQ(table_index(va, PagingLevel::L4), 273u);
  EXPECT_EQ(table_index(va, PagingLevel::L3), (va >> 30) & 511);
  EXPECT_EQ(table_index(va, PagingLevel::L2), (va >> 21) & 511);
  EXPECT_EQ(table_index(va, PagingLevel::L1), (va >> 12) & 511);
}

TEST(MmEntryRules, AcceptsOrdinaryEntriesAtEveryLevel) {
  for (auto level : {PagingLevel::L1, PagingLevel::L2, PagingLevel::L3, PagingLevel::L4}) {
    EXPECT_EQ(check_entry_bits(level, E::from_mfn(5, kBasic | E::kDirty | E::kNoExecute)), 0);
    EXPECT_EQ(check_entry_bits(level, E::from_mfn(5, kBasic | E::kAvailableLow)), 0);
  }
}

TEST(MmEntryRules, RefusesReservedAddressBitsAboveL1) {
  for (auto level : {PagingLevel::L2, PagingLevel::L3, PagingLevel::L4})
    EXPECT_EQ(check_entry_bits(level, E((uint64_t{1} << 45) | kBasic)), -XEN_EINVAL);
  // In an L1 the bits only make the address not RAM: the I/O rules decide (see below).
  EXPECT_EQ(check_entry_bits(PagingLevel::L1, E((uint64_t{1} << 45) | kBasic)), 0);
}

TEST(MmEntryRules, OnlyPrivilegedDomainsMapIoFramesWithinTheAddressWidth) {
  DomainIdentity guest{1, false, false};
  DomainIdentity dom0{0, true, false};
  const InterruptHardware machine{};
  const uint64_t last_frame = (uint64_t{1} << (kPhysicalAddressBits - kPageShift)) - 1;
  EXPECT_TRUE(may_map_io_frame(dom0, 0xfd000, machine));
  EXPECT_TRUE(may_map_io_frame(dom0, last_frame, machine));
  EXPECT_FALSE(may_map_io_frame(dom0, last_frame + 1, machine));
  EXPECT_FALSE(may_map_io_frame(guest, 0xfd000, machine));
  EXPECT_EQ(io_frame_access(dom0, 0xa0, machine), IoFrameAccess::full) << "the VGA window";
}

// Xen's dom0_setup_permissions: even dom0 may not map the local APIC (whose timer is the
// hypervisor's), the MSI range or, on AMD, the HyperTransport window: -EPERM in
// get_page_from_l1e. The IO-APICs are read-only MMIO there (mmio_ro_ranges).
TEST(MmEntryRules, Dom0MayNotMapTheInterruptHardware) {
  DomainIdentity dom0{0, true, false};
  const InterruptHardware machine{};  // the local APIC at its default 0xfee00000
  EXPECT_EQ(io_frame_access(dom0, 0xfee00, machine), IoFrameAccess::denied) << "local APIC";
  EXPECT_EQ(io_frame_access(dom0, 0xfee01, machine), IoFrameAccess::denied) << "MSI range";
  EXPECT_EQ(io_frame_access(dom0, 0xfeeff, machine), IoFrameAccess::denied) << "last page of the MSI range";
  EXPECT_EQ(io_frame_access(dom0, 0xfef00, machine), IoFrameAccess::full) << "just past the MSI range";
  EXPECT_EQ(io_frame_access(dom0, 0xfedff, machine), IoFrameAccess::full) << "just below it";
  EXPECT_EQ(io_frame_access(dom0, 0xfec00, machine), IoFrameAccess::read_only) << "first IO-APIC";
  EXPECT_EQ(io_frame_access(dom0, 0xfecff, machine), IoFrameAccess::read_only) << "IO-APIC window end";
  EXPECT_EQ(io_frame_access(dom0, 0xfed00, machine), IoFrameAccess::full) << "past the IO-APIC window";
  EXPECT_EQ(io_frame_access(dom0, 0xfebff, machine), IoFrameAccess::full) << "before it";
  EXPECT_FALSE(may_map_io_frame(dom0, 0xfee00, machine));
  EXPECT_TRUE(may_map_io_frame(dom0, 0xfec00, machine));
}

TEST(MmEntryRules, TheLocalApicIsDeniedWhereverItWasRelocated) {
  DomainIdentity dom0{0, true, false};
  InterruptHardware relocated{};
  relocated.local_apic_mfn = 0xfd000;  // IA32_APIC_BASE moved out of the MSI range
  EXPECT_TRUE(is_denied_interrupt_frame(0xfd000, relocated));
  EXPECT_EQ(io_frame_access(dom0, 0xfd000, relocated), IoFrameAccess::denied);
  EXPECT_EQ(io_frame_access(dom0, 0xfee00, relocated), IoFrameAccess::denied) << "still in the MSI range";
  EXPECT_EQ(io_frame_access(dom0, 0xfd000, InterruptHardware{}), IoFrameAccess::full);
}

TEST(MmEntryRules, TheHyperTransportWindowOnlyWhereItExists) {
  DomainIdentity dom0{0, true, false};
  InterruptHardware amd{};
  amd.hypertransport = true;
  const uint64_t first = (uint64_t{0xfd} << 32) >> kPageShift, last = ((uint64_t{1} << 40) >> kPageShift) - 1;
  EXPECT_EQ(io_frame_access(dom0, first, amd), IoFrameAccess::denied);
  EXPECT_EQ(io_frame_access(dom0, last, amd), IoFrameAccess::denied);
  EXPECT_EQ(io_frame_access(dom0, first - 1, amd), IoFrameAccess::full);
  EXPECT_EQ(io_frame_access(dom0, first, InterruptHardware{}), IoFrameAccess::full) << "not on Intel";
}

TEST(MmEntryRules, RefusesSuperpagesAndLargeBitInL4) {
  EXPECT_EQ(check_entry_bits(PagingLevel::L2, E::from_mfn(5, kBasic | E::kPageSize)), -XEN_EINVAL);
  EXPECT_EQ(check_entry_bits(PagingLevel::L3, E::from_mfn(5, kBasic | E::kPageSize)), -XEN_EINVAL);
  EXPECT_EQ(check_entry_bits(PagingLevel::L4, E::from_mfn(5, kBasic | E::kPageSize)), -XEN_EINVAL);
}

TEST(MmEntryRules, GlobalOnlyInL1AndNoCacheControl) {
  EXPECT_EQ(check_entry_bits(PagingLevel::L1, E::from_mfn(5, kBasic | E::kGlobal)), 0);
  EXPECT_EQ(check_entry_bits(PagingLevel::L2, E::from_mfn(5, kBasic | E::kGlobal)), -XEN_EINVAL);
  EXPECT_EQ(check_entry_bits(PagingLevel::L1, E::from_mfn(5, kBasic | E::kCacheDisable)), -XEN_EINVAL);
  EXPECT_EQ(check_entry_bits(PagingLevel::L1, E::from_mfn(5, kBasic | E::kWriteThrough)), -XEN_EINVAL);
  EXPECT_EQ(check_entry_bits(PagingLevel::L1, E::from_mfn(5, kBasic | E::kPageSize)), -XEN_EINVAL);
  // Bit 62 is software-available in every entry (Xen 4.17 accepts it: _PAGE_GNTTAB is 0).
  EXPECT_EQ(check_entry_bits(PagingLevel::L1, E::from_mfn(5, kBasic | (uint64_t{1} << 62))), 0);
  EXPECT_EQ(check_entry_bits(PagingLevel::L2, E::from_mfn(5, kBasic | (uint64_t{1} << 62))), 0);
}

TEST(MmEntryRules, AdjustMarksKernelMappingsAndIsIdempotent) {
  E kernel = E::from_mfn(5, E::kPresent | E::kWritable | E::kGlobal);
  E adjusted = adjust_guest_entry(PagingLevel::L1, kernel);
  EXPECT_TRUE(adjusted.user());
  EXPECT_TRUE(adjusted.has(kGuestKernelMarker));
  EXPECT_FALSE(adjusted.global()) << "a kernel page must not stay global across user switch";
  EXPECT_EQ(adjust_guest_entry(PagingLevel::L1, adjusted), adjusted);

  E user = E::from_mfn(5, E::kPresent | E::kUser | E::kGlobal);
  EXPECT_EQ(adjust_guest_entry(PagingLevel::L1, user), user);

  EXPECT_TRUE(adjust_guest_entry(PagingLevel::L2, E::from_mfn(5, E::kPresent)).user());
  E l4 = adjust_guest_entry(PagingLevel::L4, E::from_mfn(5, E::kPresent));
  EXPECT_TRUE(l4.user() && l4.accessed());
  EXPECT_EQ(adjust_guest_entry(PagingLevel::L1, E(0x5000)), E(0x5000)) << "not present: untouched";
}

TEST(MmEntryRules, HarmlessChanges) {
  E base = E::from_mfn(5, kBasic);
  EXPECT_TRUE(is_harmless_change(PagingLevel::L1, base, base.with_flags(E::kDirty | E::kNoExecute)));
  EXPECT_FALSE(is_harmless_change(PagingLevel::L1, base, base.without_flags(E::kWritable)))
      << "L1 RW changes the writable type count";
  for (PagingLevel level : {PagingLevel::L2, PagingLevel::L3, PagingLevel::L4})
    EXPECT_FALSE(is_harmless_change(level, base.without_flags(E::kWritable), base))
        << "a directory entry may be a read-only linear one (XSA-182): RW is checked as a new entry";
  EXPECT_FALSE(is_harmless_change(PagingLevel::L1, base, base.with_mfn(6)));
  EXPECT_FALSE(is_harmless_change(PagingLevel::L1, E(), base));
  EXPECT_FALSE(is_harmless_change(PagingLevel::L1, base, base.without_flags(E::kPresent)));
}

TEST(MmEntryRules, AnOperationMapsTheFramesOfItsPageOwnerOnly) {
  EXPECT_TRUE(may_map_frame_of(1, 1));
  EXPECT_FALSE(may_map_frame_of(1, 2)) << "another guest's frame needs foreigndom";
  EXPECT_FALSE(may_map_frame_of(0, 2)) << "even for dom0";
  EXPECT_TRUE(may_map_frame_of(2, 2)) << "foreigndom=2 maps domain 2's frames";
  EXPECT_FALSE(may_map_frame_of(2, 1)) << "and then not the caller's own";
  EXPECT_FALSE(may_map_frame_of(0, DOMID_XEN));
  EXPECT_TRUE(may_map_frame_of(DOMID_XEN, DOMID_XEN));
  EXPECT_FALSE(may_map_frame_of(DOMID_INVALID, DOMID_INVALID)) << "unowned frames";
  EXPECT_FALSE(may_map_frame_of(DOMID_IO, DOMID_IO)) << "I/O memory has its own rule";
}

TEST(MmEntryRules, HypervisorL4SlotsAreNotTheGuests) {
  EXPECT_TRUE(is_guest_l4_slot(0));
  EXPECT_TRUE(is_guest_l4_slot(255));
  EXPECT_FALSE(is_guest_l4_slot(256));
  EXPECT_FALSE(is_guest_l4_slot(271));
  EXPECT_TRUE(is_guest_l4_slot(272));
  EXPECT_TRUE(is_guest_l4_slot(511));
  EXPECT_FALSE(is_guest_l4_slot(512));
}

// The same rules through mmu_update and pinning, on the fake machine of mm_test_fixture.h:
// dom0's mapping of the local APIC or the MSI range is -EPERM with nothing changed; an IO-APIC
// mapping is stored without RW, whether written by mmu_update or found in a table validated
// by a pin; no references either way.
class MmIoMappings : public testing::MmuTest {
 protected:
  static constexpr DomainIdentity kDom0{testing::kGuest, true, false};
  static constexpr uint64_t kLocalApic = 0xfee00, kIoApic = 0xfec00;

  void SetUp() override {
    build_tree();
    ASSERT_EQ(pin(testing::kL4, MMUEXT_PIN_L4_TABLE), 0);
  }
  int pin_privileged(uint64_t mfn) {
    mmuext_op_t op{};
    op.cmd = MMUEXT_PIN_L1_TABLE;
    op.arg1.mfn = mfn;
    auto privileged = context(kDom0);
    return mmuext_op(privileged, bases_, op);
  }
};

TEST_F(MmIoMappings, Dom0MapsNeitherTheLocalApicNorTheMsiRange) {
  using testing::kL1;
  for (uint64_t mfn : {kLocalApic, kMsiLastMfn}) {
    EXPECT_EQ(update(kL1, 100, rw(mfn), MMU_NORMAL_PT_UPDATE, kDom0), -XEN_EPERM) << mfn;
    EXPECT_EQ(update(kL1, 100, ro(mfn), MMU_NORMAL_PT_UPDATE, kDom0), -XEN_EPERM) << mfn;
    EXPECT_EQ(read(kL1, 100), E()) << "entry unchanged";
  }
  EXPECT_AUDIT_CLEAN();
}

TEST_F(MmIoMappings, TheIoApicIsMappedReadOnly) {
  using testing::kL1;
  ASSERT_EQ(update(kL1, 100, rw(kIoApic), MMU_NORMAL_PT_UPDATE, kDom0), 0);
  EXPECT_EQ(read(kL1, 100).mfn(), kIoApic);
  EXPECT_TRUE(read(kL1, 100).present());
  EXPECT_FALSE(read(kL1, 100).writable()) << "RW dropped, as Xen's flip";
  EXPECT_AUDIT_CLEAN();
  // Asking again for RW on the installed read-only entry is no harmless flag change.
  ASSERT_EQ(update(kL1, 100, rw(kIoApic), MMU_NORMAL_PT_UPDATE, kDom0), 0);
  EXPECT_FALSE(read(kL1, 100).writable());
  EXPECT_EQ(update(kL1, 100, rw(kIoApic)), -XEN_EPERM) << "an unprivileged domain maps no I/O memory";
  ASSERT_EQ(update(kL1, 100, E(), MMU_NORMAL_PT_UPDATE, kDom0), 0);
  EXPECT_AUDIT_CLEAN();
}

// The I/O-memory permission is the page owner's (Xen's get_page_from_l1e): named as
// foreigndom, another guest or DOMID_XEN has none; DOMID_IO stands for the caller.
TEST_F(MmIoMappings, IoMemoryIsMappedOnlyForTheCallerItself) {
  using testing::kL1;
  const uint64_t mmio = 0xfd000;
  EXPECT_EQ(update_as(kL1, 100, rw(mmio), testing::kOtherGuest, kDom0), -XEN_EPERM);
  EXPECT_EQ(update_as(kL1, 100, rw(mmio), DOMID_XEN, kDom0), -XEN_EPERM);
  EXPECT_EQ(read(kL1, 100), E());
  ASSERT_EQ(update_as(kL1, 100, rw(mmio), DOMID_IO, kDom0), 0);
  EXPECT_EQ(read(kL1, 100).mfn(), mmio);
  EXPECT_EQ(update_as(kL1, 101, rw(kLocalApic), DOMID_IO, kDom0), -XEN_EPERM);
  EXPECT_EQ(update_as(kL1, 101, rw(mmio), DOMID_IO, DomainIdentity{testing::kGuest, false, false}), -XEN_EPERM);
  ASSERT_EQ(update(kL1, 100, E(), MMU_NORMAL_PT_UPDATE, kDom0), 0);
  EXPECT_AUDIT_CLEAN();
}

TEST_F(MmIoMappings, ValidationNarrowsTheIoApicAndRefusesTheLocalApic) {
  using testing::kSpareL1;
  write(kSpareL1, 3, rw(kIoApic));
  write(kSpareL1, 4, rw(kLocalApic));
  EXPECT_EQ(pin_privileged(kSpareL1), -XEN_EPERM);
  EXPECT_TRUE(read(kSpareL1, 3).writable()) << "a table that failed validation is left as written";
  EXPECT_AUDIT_CLEAN();
  write(kSpareL1, 4, E());
  ASSERT_EQ(pin_privileged(kSpareL1), 0);
  EXPECT_EQ(read(kSpareL1, 3).mfn(), kIoApic);
  EXPECT_FALSE(read(kSpareL1, 3).writable());
  EXPECT_AUDIT_CLEAN();
}

}  // namespace
}  // namespace mm
