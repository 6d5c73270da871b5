#include "mm_test_fixture.h"

namespace mm::testing {
namespace {

class MmVaMapping : public MmuTest {
 protected:
  void SetUp() override {
    build_tree();
    ASSERT_EQ(pin(kL4, MMUEXT_PIN_L4_TABLE), 0);
  }
  int update_va(uint64_t va, E value, uint64_t l4 = kL4) {
    auto ctx = context();
    return update_va_mapping(ctx, l4, va, value.raw());
  }
};

constexpr uint64_t page(unsigned index) { return uint64_t{index} << kPageShift; }

TEST_F(MmVaMapping, FindsTheL1EntryForAnAddress) {
  L1Slot slot;
  auto ctx = context();
  ASSERT_EQ(find_l1_slot(ctx, kL4, page(7) + 0x123, &slot), 0);
  EXPECT_EQ(slot.table_mfn, kL1);
  EXPECT_EQ(slot.index, 7u);
  ASSERT_EQ(find_l1_slot(ctx, kL4, page(511), &slot), 0);
  EXPECT_EQ(slot.index, 511u);
}

TEST_F(MmVaMapping, UpdatesTheMappingWithFullChecks) {
  ASSERT_EQ(update_va(page(200), rw(kLooseData)), 0);
  EXPECT_EQ(read(kL1, 200).mfn(), kLooseData);
  EXPECT_TRUE(info(kLooseData).has_type(PageType::Writable));
  EXPECT_AUDIT_CLEAN();
  ASSERT_EQ(update_va(page(200), E()), 0);
  EXPECT_EQ(info(kLooseData).general_refs(), 1u);
  EXPECT_AUDIT_CLEAN();

  auto before = snapshot();
  EXPECT_EQ(update_va(page(200), rw(kL2)), -XEN_EBUSY);
  EXPECT_EQ(update_va(page(200), ro(kForeign)), -XEN_EBUSY);
  EXPECT_COUNTS_UNCHANGED(before);
}

TEST_F(MmVaMapping, AddressesWithoutAnL1AreRefused) {
  auto before = snapshot();
  const uint64_t no_l2_entry = uint64_t{1} << 21;     // kL2[1] empty
  const uint64_t no_l3_entry = uint64_t{1} << 30;     // kL3[1] empty
  const uint64_t no_l4_entry = uint64_t{1} << 39;     // kL4[1] empty
  const uint64_t hypervisor = 0xffff800000001000ull;  // slot 256
  const uint64_t non_canonical = 0x0000900000000000ull;
  for (uint64_t va : {no_l2_entry, no_l3_entry, no_l4_entry, hypervisor, non_canonical})
    EXPECT_EQ(update_va(va, ro(kLooseData)), -XEN_EINVAL) << std::hex << va;
  EXPECT_EQ(update_va(page(1), ro(kLooseData), kSpareL4), -XEN_EINVAL) << "not a table";
  EXPECT_EQ(update_va(page(1), ro(kLooseData), kL3), -XEN_EINVAL) << "not an L4";
  EXPECT_EQ(update_va(page(1), ro(kLooseData), kFrames + 4), -XEN_EINVAL);
  EXPECT_COUNTS_UNCHANGED(before);
}

TEST_F(MmVaMapping, HighHalfGuestAddressesWork) {
  const uint64_t va = 0xffff888000000000ull + page(3);  // slot 273, Linux's direct map
  write(kSpareL3, 0, link(kSpareL2));
  write(kSpareL2, 0, link(kSpareL1));
  ASSERT_EQ(update(kL4, 273, link(kSpareL3)), 0);
  ASSERT_EQ(update_va(va, ro(kLooseData)), 0);
  EXPECT_EQ(read(kSpareL1, 3).mfn(), kLooseData);
  EXPECT_AUDIT_CLEAN();
}

}  // namespace
}  // namespace mm::testing
