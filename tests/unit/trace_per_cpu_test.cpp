// Tracing per physical CPU: the t_info layout the hypervisor writes and readers walk
// (trace/format/t_info_layout.h), and the per-CPU framing end to end: records written into
// each CPU's own ring, drained CPU by CPU into RECORDS frames with the CPU as channel (as dom0's
// capture does), turned into xentrace windows by the host's capture, and read back with every
// record attributed to the CPU whose ring it came from; lost records stay in their CPU.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "trace/capture/capture.h"
#include "trace/format/events.h"
#include "trace/format/ring.h"
#include "trace/format/t_info_layout.h"
#include "trace/format/time_ordered_drain.h"
#include "trace/parse/trace_file.h"

using namespace trace;
namespace layout = trace::t_info_layout;
constexpr uint32_t kIdle = 32767;  // DOMID_IDLE

TEST(TraceTInfo, HeaderAndListsAsXenPlacesThem) {
  // tbuf_size and one 16-bit offset per CPU, rounded up to 32-bit words.
  EXPECT_EQ(layout::first_offset(1), 1u);
  EXPECT_EQ(layout::first_offset(2), 2u);
  EXPECT_EQ(layout::first_offset(3), 2u);
  EXPECT_EQ(layout::first_offset(4), 3u);
  EXPECT_EQ(layout::first_offset(8), 5u);
  EXPECT_EQ(layout::list_offset(4, 16, 0), 3u);
  EXPECT_EQ(layout::list_offset(4, 16, 3), 3u + 48u);
  // One CPU of 1022 pages fits one page; four CPUs of 1022 need four.
  EXPECT_EQ(layout::info_pages(1, 1022), 1u);
  EXPECT_EQ(layout::info_pages(1, 1023), 1u);  // 1 + 1023 words = 4096 bytes
  EXPECT_EQ(layout::info_pages(1, 1024), 2u);
  EXPECT_EQ(layout::info_pages(4, 1022), 4u);
  EXPECT_EQ(layout::info_pages(2, 4), 1u);
}

TEST(TraceTInfo, PagesPerCpuKeepEveryOffsetIn16Bits) {
  EXPECT_EQ(layout::most_pages(1), 65535u);
  EXPECT_EQ(layout::most_pages(4), 16383u);
  EXPECT_EQ(layout::most_pages(0), 65535u);
  for (uint32_t cpus = 1; cpus <= 64; ++cpus) {
    uint32_t pages = layout::most_pages(cpus);
    EXPECT_LE(layout::list_offset(cpus, pages, cpus - 1), 0xffffu) << cpus;
  }
}

namespace {
// A t_info area as the hypervisor writes it: CPUs of `with_buffer` get a list of `pages`
// frames, CPU c's frames numbered c * 1000 + i.
std::vector<uint8_t> area(uint32_t cpus, uint16_t pages, uint64_t with_buffer) {
  std::vector<uint8_t> bytes(size_t(layout::info_pages(cpus, pages)) * layout::kPageBytes);
  std::memcpy(bytes.data(), &pages, 2);
  for (uint32_t cpu = 0; cpu < cpus; ++cpu) {
    if (!(with_buffer >> cpu & 1)) continue;
    uint16_t offset = uint16_t(layout::list_offset(cpus, pages, cpu));
    std::memcpy(bytes.data() + 2 + 2 * cpu, &offset, 2);
    for (uint32_t i = 0; i < pages; ++i) {
      uint32_t frame = cpu * 1000 + i;
      std::memcpy(bytes.data() + size_t(offset) * 4 + 4 * i, &frame, 4);
    }
  }
  return bytes;
}
}  // namespace

TEST(TraceTInfo, ReaderFindsEachCpusFrames) {
  for (uint32_t cpus : {1u, 2u, 3u, 4u, 8u}) {
    const uint16_t pages = 700;  // several t_info pages with 4 and 8 CPUs
    const uint64_t with_buffer = cpus == 1 ? 1 : 0b1011 & ((uint64_t(1) << cpus) - 1);
    std::vector<uint8_t> bytes = area(cpus, pages, with_buffer);
    layout::Reader reader{bytes.data(), bytes.size()};
    EXPECT_EQ(reader.pages(), pages);
    for (uint32_t cpu = 0; cpu < cpus; ++cpu) {
      const uint8_t* list = reader.list(cpu);
      if (!(with_buffer >> cpu & 1)) {
        EXPECT_EQ(list, nullptr) << cpus << " " << cpu;
        continue;
      }
      ASSERT_NE(list, nullptr) << cpus << " " << cpu;
      EXPECT_EQ(layout::Reader::frame(list, 0), cpu * 1000);
      EXPECT_EQ(layout::Reader::frame(list, pages - 1), cpu * 1000 + pages - 1);
    }
  }
}

TEST(TraceTInfo, ReaderRefusesListsOutsideTheArea) {
  std::vector<uint8_t> bytes = area(2, 8, 0b11);
  layout::Reader whole{bytes.data(), bytes.size()};
  ASSERT_NE(whole.list(1), nullptr);
  // A copy cut before CPU 1's list ends.
  const size_t cut = size_t(layout::list_offset(2, 8, 1)) * 4 + 8 * 4 - 1;
  layout::Reader torn{bytes.data(), cut};
  EXPECT_NE(torn.list(0), nullptr);
  EXPECT_EQ(torn.list(1), nullptr);
  // An offset pointing into the header (over the offsets themselves) or past the end.
  uint16_t into_header = 1;
  std::memcpy(bytes.data() + 2 + 2 * 1, &into_header, 2);
  EXPECT_EQ(whole.list(1), nullptr);
  uint16_t beyond = 0xffff;
  std::memcpy(bytes.data() + 2, &beyond, 2);
  EXPECT_EQ(whole.list(0), nullptr);
  // No pages per CPU: no lists; an area too short for a header: nothing.
  std::vector<uint8_t> none = area(2, 8, 0b11);
  none[0] = none[1] = 0;
  EXPECT_EQ((layout::Reader{none.data(), none.size()}.list(0)), nullptr);
  EXPECT_EQ((layout::Reader{none.data(), 1}.pages()), 0u);
  EXPECT_EQ((layout::Reader{none.data(), 3}.offset(0)), 0u);
}

namespace {
// One CPU's ring over its own t_buf and data area, as the hypervisor allocates per CPU.
struct CpuBuffer {
  std::vector<uint32_t> memory;
  TraceRing ring;
  explicit CpuBuffer(uint32_t data_bytes)
      : memory((sizeof(t_buf) + data_bytes) / 4),
        ring(reinterpret_cast<t_buf*>(memory.data()), reinterpret_cast<t_buf*>(memory.data()) + 1, data_bytes) {
    ring.reset();
  }
};

void append(std::vector<uint8_t>& to, const std::vector<uint8_t>& bytes) {
  to.insert(to.end(), bytes.begin(), bytes.end());
}

// What dom0's capture does for each drain: every CPU's ring copied out into RECORDS frames
// whose channel is the CPU.
void drain(std::vector<CpuBuffer*>& cpus, std::vector<uint8_t>& stream) {
  std::vector<uint8_t> chunk(4096);
  for (uint16_t cpu = 0; cpu < cpus.size(); ++cpu)
    while (uint32_t bytes = cpus[cpu]->ring.copy_out(chunk.data(), uint32_t(chunk.size())))
      append(stream, stream::encode_frame(uint8_t(stream::FrameType::records), cpu, chunk.data(), bytes));
}
}  // namespace

TEST(TracePerCpu, RecordsKeepTheCpuOfTheirRingThroughCaptureAndParse) {
  CpuBuffer cpu0(1024), cpu1(1024), cpu2(256);
  std::vector<CpuBuffer*> cpus{&cpu0, &cpu1, &cpu2};
  std::vector<uint8_t> s;
  stream::Hello hello;
  hello.cpus = 3;
  append(s, stream::encode_frame(uint8_t(stream::FrameType::hello), 0, hello.encode().data(), hello.encode().size()));
  // Each CPU records switches naming itself (the idle vCPU is the CPU) with rising TSCs; CPU 2's
  // small ring overflows before the first drain, so it alone has lost records.
  uint64_t tsc = 1000;
  unsigned written[3] = {};
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < 20; ++i)
      for (uint32_t cpu = 0; cpu < 3; ++cpu) {
        const uint32_t extra[4] = {kIdle, cpu, 0, cpu};
        if (cpus[cpu]->ring.write(make_record(events::kSchedSwitch, tsc++, extra, 4), {0, uint16_t(cpu)}))
          ++written[cpu];
      }
    drain(cpus, s);
  }
  // A last record on CPU 2 after the drain freed its ring: it carries the lost-records marker.
  const uint32_t extra[4] = {kIdle, 2, 0, 2};
  ASSERT_TRUE(cpu2.ring.write(make_record(events::kSchedSwitch, tsc++, extra, 4), {0, 2}));
  ++written[2];
  drain(cpus, s);
  const std::vector<uint8_t> end{0, 0, 0, 0};
  append(s, stream::encode_frame(uint8_t(stream::FrameType::end), 0, end.data(), end.size()));

  TraceWriter writer;
  Capture capture(writer);
  capture.feed(s.data(), s.size());
  const CaptureReport& report = capture.finish();
  EXPECT_TRUE(report.problems.empty());
  EXPECT_EQ(report.cpus, 3u);

  TraceFile f = parse_trace(writer.bytes());
  EXPECT_EQ(f.diagnostics.count(Severity::error), 0u);
  EXPECT_EQ(f.max_cpu_seen, 2u);
  unsigned switches[3] = {}, lost_markers[3] = {};
  uint64_t last_tsc[3] = {};
  for (const ParsedRecord& r : f.records) {
    ASSERT_LT(r.cpu, 3u);
    if (r.event == events::kSchedSwitch) {
      ++switches[r.cpu];
      EXPECT_EQ(r.extra[1], r.cpu) << "a record of CPU " << r.extra[1] << " in CPU " << r.cpu << "'s window";
      EXPECT_GT(r.tsc, last_tsc[r.cpu]);  // each CPU's records in its own order
      last_tsc[r.cpu] = r.tsc;
    }
    if (r.event == events::kLostRecords) ++lost_markers[r.cpu];
  }
  for (unsigned cpu = 0; cpu < 3; ++cpu) EXPECT_EQ(switches[cpu], written[cpu]) << cpu;
  EXPECT_EQ(written[0], 40u);
  EXPECT_EQ(written[1], 40u);
  EXPECT_LT(written[2], 41u);
  EXPECT_EQ(lost_markers[0] + lost_markers[1], 0u);
  EXPECT_GE(lost_markers[2], 1u);
  // Every window's CPU is the channel its frame came on.
  for (const Window& w : f.windows) EXPECT_LT(w.cpu, 3u);
}

TEST(TracePerCpu, DrainInTimeOrderInterleavesTheCpusWindows) {
  // CPU 0 records every 10 cycles from 100, CPU 1 every 10 from 105 but only from 300 on, CPU 2
  // has no buffer, CPU 3 one record at 250: the windows must come out with no record of one CPU
  // written after a later record of another.
  CpuBuffer cpu0(4096), cpu1(4096), cpu3(4096);
  TraceRing* rings[4] = {&cpu0.ring, &cpu1.ring, nullptr, &cpu3.ring};
  const uint32_t extra[1] = {0};
  for (uint64_t tsc = 100; tsc < 500; tsc += 10)
    ASSERT_TRUE(cpu0.ring.write(make_record(0x00014abc, tsc, extra, 1), {}));
  for (uint64_t tsc = 305; tsc < 500; tsc += 10)
    ASSERT_TRUE(cpu1.ring.write(make_record(0x00014abc, tsc, extra, 1), {}));
  ASSERT_TRUE(cpu3.ring.write(make_record(0x00014abc, 250, extra, 1), {}));
  struct Window {
    unsigned cpu;
    uint64_t first, last;
  };
  std::vector<Window> windows;
  std::vector<uint8_t> chunk(4096);
  uint32_t total = drain_in_time_order(rings, 4, chunk.data(), uint32_t(chunk.size()),
                                       [&](unsigned cpu, const uint8_t* bytes, uint32_t size) {
                                         TraceWriter w;
                                         w.window(cpu, bytes, size);
                                         TraceFile f = parse_trace(w.bytes());
                                         ASSERT_FALSE(f.records.empty());
                                         windows.push_back({cpu, f.records.front().tsc, f.records.back().tsc});
                                       });
  EXPECT_EQ(total, (40u + 20u + 1u) * 16u);
  for (size_t i = 1; i < windows.size(); ++i)
    EXPECT_LE(windows[i - 1].last, windows[i].first) << "window " << i << " of cpu " << windows[i].cpu;
  ASSERT_GE(windows.size(), 4u);
  EXPECT_EQ(windows[0].cpu, 0u);
  // Up to CPU 3's record at 250, its own record at 250 included: copy_out stops before the first
  // record stamped later than the other CPUs' oldest, so a tie stays in order (<=).
  EXPECT_EQ(windows[0].last, 250u);
  EXPECT_EQ(windows[1].cpu, 3u);
  for (TraceRing* ring : rings) {
    uint64_t tsc;
    if (ring) EXPECT_FALSE(ring->next_tsc(tsc));  // all drained
  }
  // Records stamped after `until` stay; next_tsc sees the oldest left.
  ASSERT_TRUE(cpu0.ring.write(make_record(0x00014abc, 600, extra, 1), {}));
  ASSERT_TRUE(cpu0.ring.write(make_record(0x00014abc, 700, extra, 1), {}));
  EXPECT_EQ(cpu0.ring.copy_out(chunk.data(), uint32_t(chunk.size()), 650), 16u);
  uint64_t next = 0;
  EXPECT_TRUE(cpu0.ring.next_tsc(next));
  EXPECT_EQ(next, 700u);
}
