#include "control/domid_allocation.h"

#include <gtest/gtest.h>

#include <set>

namespace {
using control::DomidAllocator;

bool in_set(const void* table, domid_t id) { return static_cast<const std::set<domid_t>*>(table)->count(id) != 0; }

struct Table {
  std::set<domid_t> ids{0};  // dom0 exists
  DomidAllocator allocator;
  DomidAllocator::Choice create(uint32_t requested) {
    DomidAllocator::Choice choice = allocator.choose(requested, in_set, &ids);
    if (!choice.error) ids.insert(choice.id);
    return choice;
  }
};

TEST(DomidAllocation, ZeroTakesTheNextIdAfterTheRover) {
  Table t;
  EXPECT_EQ(t.create(0).id, 1);
  EXPECT_EQ(t.create(0).id, 2);
  t.ids.erase(1);
  EXPECT_EQ(t.create(0).id, 3) << "the rover goes on: a freed id is not reused at once";
}

TEST(DomidAllocation, ReservedIdsAllocateToo) {
  Table t;
  for (uint32_t reserved : {uint32_t(DOMID_FIRST_RESERVED), uint32_t(DOMID_SELF), uint32_t(DOMID_INVALID), 0xffffu})
    EXPECT_EQ(t.create(reserved).error, 0) << reserved;
  EXPECT_EQ(t.ids.size(), 5u);
  EXPECT_EQ(*t.ids.rbegin(), 4) << "a reserved id is never handed out";
}

TEST(DomidAllocation, AGivenIdInUseIsEexist) {
  Table t;
  EXPECT_EQ(t.create(5).id, 5);
  EXPECT_EQ(t.create(5).error, -XEN_EEXIST);
  EXPECT_EQ(t.allocator.rover(), 0) << "a named id leaves the rover alone";
  EXPECT_EQ(t.create(0).id, 1);
}

TEST(DomidAllocation, SkipsIdsInUseAndWrapsToOne) {
  Table t;
  t.ids.insert(DOMID_FIRST_RESERVED - 1);
  EXPECT_EQ(t.create(DOMID_FIRST_RESERVED - 2).id, DOMID_FIRST_RESERVED - 2);
  // Move the rover near the end: ids 1 .. FIRST_RESERVED - 3 taken in turn.
  for (domid_t id = 1; id < DOMID_FIRST_RESERVED - 2; ++id) t.ids.insert(id);
  t.ids.erase(7);
  EXPECT_EQ(t.create(0).id, 7);
  t.ids.erase(3);
  EXPECT_EQ(t.create(0).id, 3) << "wraps from DOMID_FIRST_RESERVED to 1, never 0";
}

TEST(DomidAllocation, NoFreeIdIsEnomem) {
  Table t;
  for (domid_t id = 1; id < DOMID_FIRST_RESERVED; ++id) t.ids.insert(id);
  EXPECT_EQ(t.create(0).error, -XEN_ENOMEM) << "with the rover at 0 (Xen's loop would not end there)";
  t.ids.erase(9);
  EXPECT_EQ(t.create(0).id, 9);
  EXPECT_EQ(t.create(0).error, -XEN_ENOMEM) << "with the rover on a taken id";
}

TEST(DomidAllocation, ReservedIdIsNeverFree) {
  std::set<domid_t> none;
  EXPECT_FALSE(control::domid_free(DOMID_FIRST_RESERVED, in_set, &none));
  EXPECT_TRUE(control::domid_free(1, in_set, &none));
}
}  // namespace
