// The arithmetic of Xen 4.17's reservation calls: command words, continuations, the checks
// that make Xen do nothing, and max_pages.
#include <gtest/gtest.h>
#include "memory/reservation_rules.h"

namespace memory {
namespace {
TEST(MemoryReservationRules, CommandWordCarriesTheStartExtent) {
  MemoryCommand c = decode_command(continuation_command(6, 1234));
  EXPECT_EQ(c.op, 6u);
  EXPECT_EQ(c.start_extent, 1234u);
  EXPECT_EQ(decode_command(0x3f).op, 0x3fu);
  EXPECT_EQ(decode_command(0x40).start_extent, 1u);
}

TEST(MemoryReservationRules, TooManyExtentsToContinue) {
  EXPECT_TRUE(continuation_encodable(0x3ffffff));
  EXPECT_FALSE(continuation_encodable(0x4000000));
  EXPECT_FALSE(continuation_encodable(0xffffffff));
}

TEST(MemoryReservationRules, ExtentListMustStartInGuestSpace) {
  EXPECT_TRUE(extent_list_addressable(0, 0));
  EXPECT_TRUE(extent_list_addressable(0x7ffffffffff8ull, 0));
  EXPECT_FALSE(extent_list_addressable(0x7ffffffffff8ull, 1)) << "the continuation starts past 2^47";
  EXPECT_FALSE(extent_list_addressable(0xffff800000000000ull, 0)) << "the hypervisor's range";
  EXPECT_TRUE(extent_list_addressable(0xffff880000000000ull, 0));
  EXPECT_TRUE(extent_list_addressable(0xffffffff80000000ull, 0)) << "a kernel address";
}

TEST(MemoryReservationRules, WhatMakesXenDoNothing) {
  ReservationRequest ok{0x1000, 4, 0, 0};
  EXPECT_TRUE(reservation_proceeds(ok, false, true));
  ReservationRequest started{0x1000, 4, 0, 4};
  EXPECT_FALSE(reservation_proceeds(started, false, true)) << "start extent at the end";
  ReservationRequest order{0x1000, 4, 10, 0};
  EXPECT_FALSE(reservation_proceeds(order, false, true)) << "order 10 beyond a domU's 9";
  EXPECT_TRUE(reservation_proceeds(order, true, true)) << "within the control domain's 18";
  order.extent_order = 19;
  EXPECT_FALSE(reservation_proceeds(order, true, true));
  ReservationRequest hypervisor_list{0xffff830000000000ull, 1, 0, 0};
  EXPECT_FALSE(reservation_proceeds(hypervisor_list, true, true));
  EXPECT_FALSE(reservation_proceeds(hypervisor_list, true, false)) << "a list given is checked";
  ReservationRequest no_list{0, 1, 0, 0};
  EXPECT_TRUE(reservation_proceeds(no_list, false, false)) << "increase_reservation without a list";
}

TEST(MemoryReservationRules, MaxPagesBoundsTheReservation) {
  EXPECT_TRUE(fits_reservation(10, 11, 0));
  EXPECT_FALSE(fits_reservation(11, 11, 0));
  EXPECT_FALSE(fits_reservation(10, 11, 1));
  EXPECT_TRUE(fits_reservation(0, 512, 9));
  EXPECT_FALSE(fits_reservation(~0ull, ~0ull, 0)) << "no wrap";
}
}  // namespace
}  // namespace memory
