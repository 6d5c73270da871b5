// The dom0 relay's hypercall buffers (guest/relay/server/relay_buffer_table.h): placement in the window,
// and every access checked against one existing buffer.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "relay/server/relay_buffer_table.h"

namespace {
using lib::relay::BufferTable;
using Status = BufferTable::Status;
constexpr uint64_t kBase = 0xffffffffb4000000ull;
constexpr uint64_t kPage = 4096;

struct Table {
  BufferTable table{kBase};
  std::vector<std::vector<uint8_t>> memory;
  uint64_t add(uint32_t pages) {
    uint64_t address = 0;
    EXPECT_EQ(table.place(pages, address), Status::ok);
    memory.emplace_back(pages * kPage);
    EXPECT_EQ(table.insert(address, pages, memory.back().data()), Status::ok);
    return address;
  }
};

TEST(RelayBufferTable, PlacesBuffersFirstFitAndReusesFreedSpace) {
  Table t;
  uint64_t a = t.add(1), b = t.add(3), c = t.add(1);
  EXPECT_EQ(a, kBase);
  EXPECT_EQ(b, kBase + kPage);
  EXPECT_EQ(c, kBase + 4 * kPage);
  BufferTable::Buffer removed;
  ASSERT_EQ(t.table.remove(b, removed), Status::ok);
  EXPECT_EQ(removed.pages, 3u);
  EXPECT_EQ(t.add(2), kBase + kPage);      // fits in the hole
  EXPECT_EQ(t.add(2), kBase + 5 * kPage);  // does not
  EXPECT_EQ(t.table.count(), 4u);
  EXPECT_EQ(t.table.pages_used(), 6u);
}

TEST(RelayBufferTable, RefusesZeroHugeAndFullPlacements) {
  Table t;
  uint64_t address;
  EXPECT_EQ(t.table.place(0, address), Status::bad_range);
  EXPECT_EQ(t.table.place(BufferTable::kWindowPages + 1, address), Status::bad_range);
  t.add(BufferTable::kWindowPages - 1);
  EXPECT_EQ(t.table.place(2, address), Status::limit);
  EXPECT_EQ(t.table.place(1, address), Status::ok);
}

TEST(RelayBufferTable, TableFullIsALimit) {
  Table t;
  for (uint32_t i = 0; i < BufferTable::kMaxBuffers; ++i) t.add(1);
  uint64_t address;
  EXPECT_EQ(t.table.place(1, address), Status::limit);
}

TEST(RelayBufferTable, InsertRefusesAddressesPlaceWouldNotGive) {
  Table t;
  std::vector<uint8_t> m(kPage);
  EXPECT_EQ(t.table.insert(kBase - kPage, 1, m.data()), Status::bad_range);
  EXPECT_EQ(t.table.insert(kBase + 1, 1, m.data()), Status::bad_range);
  EXPECT_EQ(t.table.insert(kBase + (BufferTable::kWindowPages - 1) * kPage, 2, m.data()), Status::bad_range);
  uint64_t a = t.add(2);
  EXPECT_EQ(t.table.insert(a + kPage, 1, m.data()), Status::bad_range);  // overlaps
}

TEST(RelayBufferTable, RemoveNeedsTheStartOfABuffer) {
  Table t;
  uint64_t a = t.add(2);
  BufferTable::Buffer removed;
  EXPECT_EQ(t.table.remove(a + kPage, removed), Status::no_buffer);
  EXPECT_EQ(t.table.remove(0x1234, removed), Status::no_buffer);
  EXPECT_EQ(t.table.remove(a, removed), Status::ok);
  EXPECT_EQ(t.table.remove(a, removed), Status::no_buffer);  // twice
}

TEST(RelayBufferTable, AccessesStayInsideOneBuffer) {
  Table t;
  uint64_t a = t.add(1), b = t.add(1);  // adjacent: a range may not run from one into the other
  uint8_t bytes[16] = {1, 2, 3, 4};
  EXPECT_EQ(t.table.write(a + 10, bytes, 4), Status::ok);
  EXPECT_EQ(t.memory[0][10], 1);
  EXPECT_EQ(t.memory[0][13], 4);
  uint8_t back[4] = {};
  EXPECT_EQ(t.table.read(a + 10, back, 4), Status::ok);
  EXPECT_EQ(back[3], 4);
  EXPECT_EQ(t.table.write(a + kPage - 2, bytes, 4), Status::bad_range);
  EXPECT_EQ(t.table.read(b - 1, back, 2), Status::bad_range);
  EXPECT_EQ(t.table.write(b + kPage, bytes, 1), Status::no_buffer);
  EXPECT_EQ(t.table.read(kBase - 1, back, 1), Status::no_buffer);
  EXPECT_TRUE(t.table.covers(a, kPage));
  EXPECT_FALSE(t.table.covers(a, kPage + 1));
  EXPECT_FALSE(t.table.covers(a + 1, UINT64_MAX));  // no wrap
  EXPECT_TRUE(t.table.covers(b + kPage - 1, 0));
  EXPECT_FALSE(t.table.covers(b + kPage, 0));
}
}  // namespace
