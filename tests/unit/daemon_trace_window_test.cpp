#include "tools/daemon/trace_window.h"

#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "trace/format/events.h"
#include "trace/format/record_header.h"

namespace {
using namespace pvhv::daemon;

void put(std::vector<uint8_t>& out, uint32_t event, std::vector<uint32_t> extra, bool tsc) {
  uint32_t header = trace::RecordHeader::make(event, unsigned(extra.size()), tsc).raw();
  auto word = [&](uint32_t w) {
    uint8_t b[4];
    std::memcpy(b, &w, 4);
    out.insert(out.end(), b, b + 4);
  };
  word(header);
  if (tsc) {
    word(0x1234);
    word(0);
  }
  for (uint32_t w : extra) word(w);
}

TEST(DaemonTraceWindow, CountsRecordsAndLostMarkers) {
  std::vector<uint8_t> bytes;
  put(bytes, 0x0020f001, {1, 2}, true);
  put(bytes, trace::events::kLostRecords, {17, 0, 0, 0}, true);
  put(bytes, 0x0020f002, {}, false);
  put(bytes, trace::events::kWrapBuffer, {}, false);  // padding: not a record
  TraceCounts counts;
  count_trace_window(bytes.data(), bytes.size(), counts);
  EXPECT_EQ(counts.records, 3u);
  EXPECT_EQ(counts.lost, 17u);
}

TEST(DaemonTraceWindow, APartRecordAtTheEndIsNotCounted) {
  std::vector<uint8_t> bytes;
  put(bytes, 0x0020f001, {1, 2, 3}, true);
  put(bytes, 0x0020f001, {1, 2, 3}, true);
  TraceCounts counts;
  count_trace_window(bytes.data(), bytes.size() - 4, counts);
  EXPECT_EQ(counts.records, 1u);
  count_trace_window(bytes.data(), 3, counts);
  EXPECT_EQ(counts.records, 1u) << "less than a header";
}

TEST(DaemonTraceWindow, GarbageNeverReadsPastTheEnd) {
  std::vector<uint8_t> bytes(4096);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = uint8_t(i * 131 + 7);
  for (size_t size = 0; size < bytes.size(); size += 13) {
    std::vector<uint8_t> exact(bytes.begin(), bytes.begin() + long(size));
    TraceCounts counts;
    count_trace_window(exact.data(), exact.size(), counts);
    EXPECT_LE(counts.records, size / 4);
  }
}
}  // namespace
