// The trace ring: encode/decode, wrap padding, lost records, index discipline (Xen's
// prod/cons modulo 2*size), and a consumer that finds garbage indices.
#include <gtest/gtest.h>

#include <vector>

#include "trace/format/event_mask.h"
#include "trace/format/events.h"
#include "trace/format/record_view.h"
#include "trace/format/ring.h"

using namespace trace;

namespace {

struct Ring {
  explicit Ring(uint32_t bytes) : data(bytes / 4 + 2, 0xdeadbeef), ring(&header, data.data(), bytes) { ring.reset(); }
  t_buf header{};
  std::vector<uint32_t> data;
  TraceRing ring;
};

RecordFields record(uint32_t event, uint64_t tsc, unsigned extra) {
  uint32_t words[7] = {1, 2, 3, 4, 5, 6, 7};
  return make_record(event, tsc, words, extra);
}

}  // namespace

TEST(TraceRecordHeader, EncodesEventExtraAndTscFlag) {
  RecordHeader h = RecordHeader::make(events::kPtwrRehook, 5, true);
  EXPECT_EQ(h.event(), events::kPtwrRehook);
  EXPECT_EQ(h.extra_words(), 5u);
  EXPECT_TRUE(h.has_tsc());
  EXPECT_EQ(h.size_bytes(), 4u + 8 + 20);
  EXPECT_EQ(h.raw() >> 31, 1u);
  EXPECT_EQ(TRC_HD_EXTRA(h.raw()), 5u);  // agrees with Xen's own macros
  EXPECT_EQ(TRC_HD_TO_EVENT(h.raw()), events::kPtwrRehook);
}

TEST(TraceRecordView, DecodesWhatTheEncoderWrote) {
  uint32_t words[10] = {};
  size_t n = encode_record(record(events::kInvlpg, 0x123456789abcull, 2), words);
  ASSERT_EQ(n, 5u);
  RecordView view(words);
  EXPECT_EQ(view.event(), events::kInvlpg);
  EXPECT_EQ(view.tsc(), 0x123456789abcull);
  EXPECT_EQ(view.extra64(0), (uint64_t(2) << 32) | 1);
  EXPECT_TRUE(RecordView::fits(words, 5));
  EXPECT_FALSE(RecordView::fits(words, 4));
}

TEST(TraceRing, PopsRecordsInOrder) {
  Ring r(1024);
  for (unsigned i = 0; i < 10; ++i) ASSERT_TRUE(r.ring.write(record(events::kTlbFlush, 100 + i, 2), {}));
  RecordFields out;
  for (unsigned i = 0; i < 10; ++i) {
    ASSERT_TRUE(r.ring.pop(out));
    EXPECT_EQ(out.tsc, 100 + i);
    EXPECT_EQ(out.extra_count, 2u);
  }
  EXPECT_FALSE(r.ring.pop(out));
}

TEST(TraceRing, WrapsWithPaddingAndIndicesModuloTwiceSize) {
  Ring r(TraceRing::kMinimumBytes + 12);  // not a power of two, and not a record multiple
  RecordFields out;
  uint64_t tsc = 1;
  for (int round = 0; round < 200; ++round) {
    ASSERT_TRUE(r.ring.write(record(events::kPtwrRehook, tsc, 5), {})) << round;
    ASSERT_TRUE(r.ring.pop(out));
    EXPECT_EQ(out.tsc, tsc);
    EXPECT_EQ(out.event, events::kPtwrRehook);
    EXPECT_LT(r.header.prod, 2 * r.ring.size());
    EXPECT_EQ(r.header.prod % 4, 0u);
    tsc++;
  }
  EXPECT_FALSE(r.ring.corrupt());
}

TEST(TraceRing, PaddingIsAWrapRecordThatFillsToTheEnd) {
  Ring r(TraceRing::kMinimumBytes);                                // 28 + 40 = 68 bytes
  ASSERT_TRUE(r.ring.write(record(events::kTlbFlush, 1, 2), {}));  // 20 bytes
  ASSERT_TRUE(r.ring.write(record(events::kTlbFlush, 2, 2), {}));  // 40
  RecordFields out;
  ASSERT_TRUE(r.ring.pop(out));
  ASSERT_TRUE(r.ring.pop(out));
  // 28 bytes remain before the wrap point: a 40-byte record needs padding first.
  ASSERT_TRUE(r.ring.write(record(events::kPtwrRehook, 3, 7), {}));
  RecordView pad(r.data.data() + 10);
  EXPECT_EQ(pad.event(), events::kWrapBuffer);
  EXPECT_EQ(pad.size_bytes(), 28u);
  ASSERT_TRUE(r.ring.pop(out));
  EXPECT_EQ(out.event, events::kPtwrRehook);
}

TEST(TraceRing, CountsLostRecordsAndReportsThemWhenSpaceFrees) {
  Ring r(256);
  unsigned written = 0, lost = 0;
  for (unsigned i = 0; i < 40; ++i) (r.ring.write(record(events::kTlbFlush, 1000 + i, 2), {7, 1}) ? written : lost)++;
  EXPECT_GT(lost, 0u);
  EXPECT_EQ(r.ring.lost(), lost);
  RecordFields out;
  while (r.ring.pop(out)) {
  }
  ASSERT_TRUE(r.ring.write(record(events::kTlbFlush, 5000, 2), {7, 1}));
  EXPECT_EQ(r.ring.lost(), 0u);
  ASSERT_TRUE(r.ring.pop(out));
  ASSERT_EQ(out.event, events::kLostRecords);
  LostRecords marker = LostRecords::from_extra(out.extra);
  EXPECT_EQ(marker.count, lost);
  EXPECT_EQ(marker.domain, 7);
  EXPECT_EQ(marker.vcpu, 1);
  EXPECT_EQ(marker.first_tsc, 1000u + written);
  ASSERT_TRUE(r.ring.pop(out));
  EXPECT_EQ(out.tsc, 5000u);
}

TEST(TraceRing, CopyOutGivesWholeRecordsOnly) {
  Ring r(512);
  for (unsigned i = 0; i < 5; ++i) ASSERT_TRUE(r.ring.write(record(events::kTlbFlush, i + 1, 2), {}));
  uint8_t buffer[50];
  EXPECT_EQ(r.ring.copy_out(buffer, sizeof buffer), 40u);  // two 20-byte records
  EXPECT_EQ(r.ring.unconsumed_bytes(), 60u);
}

TEST(TraceRing, RejectsBogusConsumerIndex) {
  Ring r(512);
  r.header.cons = 3;  // misaligned: a consumer bug or a hostile dom0
  EXPECT_FALSE(r.ring.write(record(events::kTlbFlush, 1, 2), {}));
  EXPECT_TRUE(r.ring.corrupt());
  RecordFields out;
  EXPECT_FALSE(r.ring.pop(out));
}

TEST(TraceRing, RejectsTooSmallRings) {
  Ring r(16);
  EXPECT_FALSE(r.ring.valid());
  EXPECT_FALSE(r.ring.write(record(events::kTlbFlush, 1, 2), {}));
}

// Xen's event-mask tests (__trace_var): any common bit, then class, then subclass.
TEST(TraceEventMask, XensThreeTests) {
  using trace::event_mask_admits;
  EXPECT_TRUE(event_mask_admits(TRC_ALL, TRC_PV_HYPERCALL_V2));
  EXPECT_TRUE(event_mask_admits(TRC_ALL, trace::events::kPtwrUnhook)) << "our TRC_GEN subclass 4";
  EXPECT_TRUE(event_mask_admits(TRC_PV, TRC_PV_HYPERCALL_V2));
  EXPECT_FALSE(event_mask_admits(TRC_SCHED, TRC_PV_HYPERCALL_V2))
      << "a common subclass bit (1) is not enough: the class differs";
  EXPECT_FALSE(event_mask_admits(TRC_PV_SUBCALL, TRC_PV_HYPERCALL_V2)) << "same class, other subclass";
  EXPECT_TRUE(event_mask_admits(TRC_PV_SUBCALL, TRC_PV_HYPERCALL_SUBCALL));
  EXPECT_TRUE(event_mask_admits(TRC_SCHED, TRC_SCHED_SWITCH));
  EXPECT_FALSE(event_mask_admits(TRC_SCHED_MIN, TRC_SCHED_SWITCH)) << "verbose subclass";
  EXPECT_FALSE(event_mask_admits(0, TRC_PV_HYPERCALL_V2));
  EXPECT_FALSE(event_mask_admits(TRC_GEN & ~0x4000u, trace::events::kPtwrUnhook))
      << "TRC_GEN without subclass 4 masks our own events out";
}
