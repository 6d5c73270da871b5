// The trace parser on generated traces, the Xen 4.17 fixture and corrupt inputs: every
// problem is a diagnostic with an offset, never a crash.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <random>

#include "trace/analyze/analysis.h"
#include "trace/capture/trace_writer.h"
#include "trace/format/events.h"

using namespace trace;

namespace {

std::vector<uint8_t> small_trace() {
  TraceWriter w;
  w.window(0, {make_record(events::kTlbFlush, 100, std::vector<uint32_t>{1, 2}.data(), 2),
               make_record(events::kInvlpg, 200, std::vector<uint32_t>{0x1000, 0}.data(), 2)});
  w.window(1, {make_record(events::kAuditResult, 150, std::vector<uint32_t>{10, 0}.data(), 2)});
  return w.bytes();
}

TraceFile parse(const std::vector<uint8_t>& bytes) { return parse_trace(bytes); }

}  // namespace

TEST(TraceParse, ReadsWindowsAndRecords) {
  TraceFile f = parse(small_trace());
  ASSERT_EQ(f.windows.size(), 2u);
  ASSERT_EQ(f.records.size(), 3u);
  EXPECT_EQ(f.records[0].event, events::kTlbFlush);
  EXPECT_EQ(f.records[2].cpu, 1u);
  EXPECT_EQ(f.records[1].extra64(0), 0x1000u);
  EXPECT_EQ(f.diagnostics.entries().size(), 0u);
}

TEST(TraceParse, MergesCpusByTsc) {
  TraceFile f = parse(small_trace());
  auto steps = order_records(f);
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_EQ(f.records[steps[1].record].event, events::kAuditResult);  // TSC 150 between 100 and 200
}

TEST(TraceParse, ForeignFileIsRefused) {
  std::vector<uint8_t> elf = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  TraceFile f = parse(elf);
  EXPECT_TRUE(f.foreign);
  EXPECT_EQ(f.diagnostics.count(Problem::foreign_file), 1u);
}

TEST(TraceParse, TruncationAtEveryOffsetIsDiagnosed) {
  std::vector<uint8_t> good = small_trace();
  for (size_t cut = 0; cut < good.size(); ++cut) {
    std::vector<uint8_t> part(good.begin(), good.begin() + long(cut));
    TraceFile f = parse(part);
    bool at_window_boundary = cut == 0 || cut == 12 + 40;  // a shorter but valid file
    if (!at_window_boundary) EXPECT_GT(f.diagnostics.count(Severity::error), 0u) << "cut at " << cut;
    EXPECT_LE(f.records.size(), 3u);
    analyse("t", std::move(f), std::nullopt);  // analyses survive partial input too
  }
}

TEST(TraceParse, BitFlipsNeverCrash) {
  // A trace our hypervisor wrote (trace/fixtures/README.md).
  std::ifstream in(PVHV_FIXTURE_DIR "/pvhv-fork-writable.trace", std::ios::binary);
  std::vector<uint8_t> good((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(good.size(), 1000u);
  std::mt19937 random(42);
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<uint8_t> bad = good;
    for (int flips = 0; flips < 4; ++flips) bad[random() % bad.size()] ^= uint8_t(1u << (random() % 8));
    TraceFile f = parse(bad);
    EXPECT_LE(f.records.size(), bad.size() / 4);
    analyse("t", std::move(f), std::nullopt);
  }
}

TEST(TraceParse, RecordCrossingItsWindowIsReported) {
  std::vector<uint8_t> bytes = small_trace();
  bytes[8] = 30;  // first window claims 30 bytes: its second record would run past it
  TraceFile f = parse(bytes);
  EXPECT_GT(f.diagnostics.count(Problem::misaligned) + f.diagnostics.count(Problem::record_overrun), 0u);
}

TEST(TraceParse, CorruptWindowHeaderResynchronises) {
  std::vector<uint8_t> bytes = small_trace();
  size_t second = 12 + 40;  // first window: header + two 20-byte records
  bytes[second] ^= 0xff;
  TraceFile f = parse(bytes);
  EXPECT_EQ(f.diagnostics.count(Problem::corrupt_window), 1u);
  EXPECT_EQ(f.records.size(), 2u);
}

TEST(TraceParse, TscGoingBackwardsIsAWarning) {
  TraceWriter w;
  uint32_t extra[2] = {0, 0};
  w.window(0, {make_record(events::kTlbFlush, 500, extra, 2), make_record(events::kTlbFlush, 400, extra, 2)});
  TraceFile f = parse(w.bytes());
  EXPECT_EQ(f.diagnostics.count(Problem::tsc_backwards), 1u);
  EXPECT_EQ(f.diagnostics.entries()[0].offset, 12u + 20u);
  EXPECT_EQ(f.records.size(), 2u);
}

TEST(TraceParse, UnknownEventsAndWrongExtraCountsAreReported) {
  TraceWriter w;
  uint32_t extra[7] = {};
  w.window(0, {make_record(0x01234567, 1, extra, 1), make_record(events::kPtwrRehook, 2, extra, 3)});
  TraceFile f = parse(w.bytes());
  EXPECT_EQ(f.diagnostics.count(Problem::unknown_event), 1u);
  EXPECT_EQ(f.diagnostics.count(Problem::bad_extra_words), 1u);
  EXPECT_EQ(f.records.size(), 2u);
}

TEST(TraceParse, BadCpuNumberSkipsTheWindow) {
  std::vector<uint8_t> bytes = small_trace();
  bytes[4] = 0xff, bytes[5] = 0xff, bytes[6] = 0xff;
  TraceFile f = parse(bytes);
  EXPECT_EQ(f.diagnostics.count(Problem::bad_cpu), 1u);
  EXPECT_EQ(f.records.size(), 1u);
}

TEST(TraceParse, LimitsBoundTheWork) {
  ParseLimits limits;
  limits.max_records = 2;
  limits.max_diagnostics = 1;
  TraceFile f = parse_trace(small_trace(), limits);
  EXPECT_EQ(f.records.size(), 2u);
  EXPECT_EQ(f.diagnostics.count(Problem::limit_reached), 1u);
}

TEST(TraceParse, MissingFileIsADiagnostic) {
  TraceFile f = parse_trace_file("/nonexistent/trace");
  EXPECT_TRUE(f.foreign);
  EXPECT_EQ(f.diagnostics.entries().size(), 1u);
}
