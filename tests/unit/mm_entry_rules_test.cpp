#include <gtest/gtest.h>

#include "mm/entry_rules.h"
#include "mm/page_table_entry.h"

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
    const uint64_t last_frame = (uint64_t{1} << (kPhysicalAddressBits - kPageShift)) - 1;
    EXPECT_TRUE(may_map_io_frame(dom0, 0xfee00));
    EXPECT_TRUE(may_map_io_frame(dom0, last_frame));
    EXPECT_FALSE(may_map_io_frame(dom0, last_frame + 1));
    EXPECT_FALSE(may_map_io_frame(guest, 0xfee00));
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
    EXPECT_TRUE(is_harmless_change(PagingLevel::L2, base, base.without_flags(E::kWritable)));
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

}  // namespace
}  // namespace mm
