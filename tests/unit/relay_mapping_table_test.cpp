// The dom0 relay's table of lasting foreign mappings (guest/relay/server/relay_mapping_table.h): bounded
// in all and per domain, and a handle names one mapping only, never a later one in its slot.
#include <gtest/gtest.h>

#include <set>

#include "relay/server/relay_mapping_table.h"

namespace {
using lib::relay::MappingTable;
using Status = MappingTable::Status;

uint32_t map(MappingTable& table, uint16_t domid, uint64_t frame) {
  uint32_t slot = 0;
  EXPECT_EQ(table.reserve(domid, slot), Status::ok);
  return table.insert(slot, domid, frame);
}

TEST(RelayMappingTable, HandlesNameTheirMappingOnly) {
  MappingTable table;
  uint32_t first = map(table, 1, 10), second = map(table, 1, 11);
  EXPECT_NE(first, 0u);
  EXPECT_NE(first, second);
  uint32_t slot = 99;
  ASSERT_EQ(table.find(second, slot), Status::ok);
  EXPECT_EQ(table.slot(slot).frame, 11u);
  EXPECT_EQ(table.slot(slot).domid, 1);
  table.remove(slot);
  EXPECT_EQ(table.find(second, slot), Status::no_mapping);
  EXPECT_EQ(table.count(), 1u);
  uint32_t third = map(table, 2, 11);  // the freed slot again, another generation
  EXPECT_NE(third, second);
  EXPECT_EQ(third & 0xff, second & 0xff);
  EXPECT_EQ(table.find(second, slot), Status::no_mapping);
  EXPECT_EQ(table.find(0, slot), Status::no_mapping);
  EXPECT_EQ(table.find(0xffffffffu, slot), Status::no_mapping);
  EXPECT_EQ(table.find(MappingTable::kMaxMappings, slot), Status::no_mapping);  // slot 128 does not exist
}

TEST(RelayMappingTable, GenerationsWrapWithoutHandleZeroOrRepeatsInARow) {
  MappingTable table;
  uint32_t slot = 0, previous = 0;
  std::set<uint32_t> seen;
  // 2^24 reuses of slot 0: every handle nonzero, none the one before it.
  for (uint32_t i = 0; i < (1u << 24) + 3; ++i) {
    ASSERT_EQ(table.reserve(4, slot), Status::ok);
    ASSERT_EQ(slot, 0u);
    uint32_t handle = table.insert(slot, 4, i);
    ASSERT_NE(handle, 0u);
    ASSERT_NE(handle, previous);
    if (i < 1000) seen.insert(handle);
    previous = handle;
    table.remove(slot);
  }
  EXPECT_EQ(seen.size(), 1000u);
}

TEST(RelayMappingTable, LimitsPerDomainAndInAll) {
  MappingTable table;
  for (uint32_t i = 0; i < MappingTable::kMaxPerDomain; ++i) map(table, 7, i);
  uint32_t slot = 0;
  EXPECT_EQ(table.reserve(7, slot), Status::limit_domain);
  EXPECT_EQ(table.count_of(7), MappingTable::kMaxPerDomain);
  uint16_t domid = 8;
  while (table.count() < MappingTable::kMaxMappings) {
    if (table.count_of(domid) == MappingTable::kMaxPerDomain) ++domid;
    map(table, domid, 1);
  }
  EXPECT_EQ(table.reserve(500, slot), Status::limit_total);
  table.remove(5);
  EXPECT_EQ(table.reserve(500, slot), Status::ok);
  EXPECT_EQ(slot, 5u);
  table.remove(5);  // twice: nothing more
  table.remove(MappingTable::kMaxMappings + 3);
  EXPECT_EQ(table.count(), MappingTable::kMaxMappings - 1);
}

}  // namespace
