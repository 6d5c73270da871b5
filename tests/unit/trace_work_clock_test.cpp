// Workload cycles between two TSCs: dom0's capture drains (CAPTURE_DRAIN) taken out.
#include <gtest/gtest.h>

#include "trace/analyze/work_clock.h"
#include "trace/format/events.h"

using namespace trace;

namespace {

ParsedRecord drain(uint64_t start, uint64_t end) {
  ParsedRecord r;
  r.event = events::kCaptureDrain;
  r.has_tsc = true;
  r.tsc = end;
  r.extra_count = 3;
  r.extra[0] = uint32_t(start);
  r.extra[1] = uint32_t(start >> 32);
  r.extra[2] = 4096;
  return r;
}

TraceFile with(std::initializer_list<ParsedRecord> records) {
  TraceFile file;
  file.records = records;
  return file;
}

}  // namespace

TEST(TraceWorkClock, WithoutDrainsItIsTheSpan) {
  WorkClock clock(with({}));
  EXPECT_EQ(clock.cycles(100, 250), 150u);
  EXPECT_EQ(clock.cycles(250, 100), 0u) << "backwards is nothing, never a wrap-around";
}

TEST(TraceWorkClock, DrainsInsideAndAcrossTheEndsAreTakenOut) {
  WorkClock clock(with({drain(1000, 1100), drain(2000, 2500), drain(5000, 6000)}));
  EXPECT_EQ(clock.drains(), 3u);
  EXPECT_EQ(clock.cycles(0, 3000), 3000u - 100 - 500);
  EXPECT_EQ(clock.cycles(1050, 2100), 1050u - 50 - 100) << "partly inside at both ends";
  EXPECT_EQ(clock.cycles(2100, 2200), 0u) << "entirely inside a drain";
  EXPECT_EQ(clock.cycles(3000, 4000), 1000u) << "between drains";
  EXPECT_EQ(clock.cycles(0, 10000), 10000u - 100 - 500 - 1000);
}

TEST(TraceWorkClock, OverlappingOrOddDrainsCountOnce) {
  ParsedRecord backwards = drain(900, 800);  // end before start: ignored
  ParsedRecord short_record = drain(10, 20);
  short_record.extra_count = 2;  // malformed: ignored
  WorkClock clock(with({drain(1000, 2000), drain(1500, 2500), backwards, short_record}));
  EXPECT_EQ(clock.drains(), 1u);
  EXPECT_EQ(clock.cycles(0, 3000), 3000u - 1500);
}
