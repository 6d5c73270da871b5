// The capture stream protocol (frames, CRC, resynchronisation) and xentrace's output framing.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "trace/capture/capture.h"
#include "trace/capture/crc32.h"
#include "trace/analyze/analysis.h"
#include "trace/format/events.h"

using namespace trace;

namespace {

std::vector<uint8_t> frame(stream::FrameType type, uint16_t channel, const std::vector<uint8_t>& payload) {
  return stream::encode_frame(uint8_t(type), channel, payload.data(), payload.size());
}

std::vector<uint8_t> records_of(uint64_t tsc) {
  uint32_t words[5];
  uint32_t extra[2] = {1, uint32_t(events::FlushReason::unhook)};
  encode_record(make_record(events::kTlbFlush, tsc, extra, 2), words);
  return std::vector<uint8_t>(reinterpret_cast<uint8_t*>(words), reinterpret_cast<uint8_t*>(words) + 20);
}

void append(std::vector<uint8_t>& to, const std::vector<uint8_t>& bytes) {
  to.insert(to.end(), bytes.begin(), bytes.end());
}

std::vector<uint8_t> session() {
  std::vector<uint8_t> s;
  stream::Hello hello;
  hello.cpus = 2;
  hello.tsc_hz = 2000000000;
  append(s, frame(stream::FrameType::hello, 0, hello.encode()));
  append(s, frame(stream::FrameType::records, 0, records_of(100)));
  append(s, frame(stream::FrameType(0x80), 3, {1, 2, 3}));  // a control frame
  append(s, frame(stream::FrameType::records, 1, records_of(150)));
  append(s, frame(stream::FrameType::end, 0, {0, 0, 0, 0}));
  return s;
}

}  // namespace

TEST(TraceStream, Crc32MatchesTheStandardCheckValue) {
  const char* text = "123456789";
  EXPECT_EQ(crc32(reinterpret_cast<const uint8_t*>(text), 9), 0xcbf43926u);
}

// The tables are the polynomial's: eight bytes at a time (and the bytes left over one by one)
// give what the bit-by-bit definition gives, on any data and length, fed whole or in two parts
// (as a frame's header and payload are; the second part then starts unaligned).
TEST(TraceStream, Crc32ByTableIsTheBitwiseDefinition) {
  auto bitwise = [](uint32_t crc, const std::vector<uint8_t>& data, size_t from, size_t to) {
    crc = ~crc;
    for (size_t i = from; i < to; ++i) {
      crc ^= data[i];
      for (int bit = 0; bit < 8; ++bit) crc = (crc & 1) ? 0xedb88320u ^ (crc >> 1) : crc >> 1;
    }
    return ~crc;
  };
  std::mt19937 random(12);
  for (size_t size : {size_t(0), size_t(1), size_t(7), size_t(8), size_t(9), size_t(12), size_t(15), size_t(17),
                      size_t(255), size_t(4096), size_t(5000)}) {
    std::vector<uint8_t> data(size);
    for (uint8_t& byte : data) byte = uint8_t(random());
    const uint32_t whole = bitwise(0, data, 0, size);
    EXPECT_EQ(crc32(data.data(), size), whole) << size;
    const size_t split = size / 3;
    EXPECT_EQ(crc32_update(crc32(data.data(), split), data.data() + split, size - split), whole) << size;
  }
}

TEST(TraceStream, CaptureWritesXentraceWindows) {
  TraceWriter writer;
  Capture capture(writer);
  std::vector<uint8_t> s = session();
  for (size_t i = 0; i < s.size(); i += 7)  // arrives in odd-sized pieces
    capture.feed(s.data() + i, std::min<size_t>(7, s.size() - i));
  const CaptureReport& report = capture.finish();
  EXPECT_TRUE(report.problems.empty()) << report.problems[0];
  EXPECT_EQ(report.windows, 2u);
  EXPECT_EQ(report.control_frames, 1u);
  TraceFile f = parse_trace(writer.bytes());
  EXPECT_EQ(f.diagnostics.count(Severity::error), 0u);
  ASSERT_EQ(f.windows.size(), 3u);  // TSC frequency note + one window per RECORDS frame
  EXPECT_EQ(f.windows[2].cpu, 1u);
  auto a = analyse("s", std::move(f), std::nullopt);
  EXPECT_EQ(a->hz.hz, 2000000000u);
  EXPECT_EQ(a->hz.source, CpuHz::Source::trace);
}

TEST(TraceStream, CorruptFramesAreSkippedAndReported) {
  std::vector<uint8_t> s = session();
  s[40] ^= 0x55;  // inside the first RECORDS frame: CRC mismatch
  std::vector<uint8_t> garbage(100, 0xab);
  s.insert(s.begin() + 36, garbage.begin(), garbage.end());
  TraceWriter writer;
  Capture capture(writer);
  capture.feed(s.data(), s.size());
  const CaptureReport& report = capture.finish();
  EXPECT_FALSE(report.problems.empty());
  EXPECT_GT(report.skipped_bytes, 100u);
  EXPECT_TRUE(report.saw_end);
  TraceFile f = parse_trace(writer.bytes());
  EXPECT_EQ(f.diagnostics.count(Severity::error), 0u);
}

TEST(TraceStream, PartialRecordsAreDroppedNotWritten) {
  std::vector<uint8_t> s;
  append(s, frame(stream::FrameType::hello, 0, stream::Hello{}.encode()));
  std::vector<uint8_t> records = records_of(1);
  records.resize(18);
  append(s, frame(stream::FrameType::records, 0, records));
  TraceWriter writer;
  Capture capture(writer);
  capture.feed(s.data(), s.size());
  const CaptureReport& report = capture.finish();
  EXPECT_EQ(report.partial_record_bytes, 18u);
  EXPECT_EQ(report.windows, 0u);
  EXPECT_FALSE(report.saw_end);
}

TEST(TraceStream, OversizedLengthDoesNotAllocate) {
  std::vector<uint8_t> s = frame(stream::FrameType::records, 0, {});
  s[8] = 0xff, s[9] = 0xff, s[10] = 0xff, s[11] = 0x7f;  // 2 GiB claimed
  TraceWriter writer;
  Capture capture(writer);
  capture.feed(s.data(), s.size());
  EXPECT_EQ(capture.finish().frames, 0u);
}
