// The bytes the hypervisor writes into its trace points: the NOP while off, the JMP while on.
#include <gtest/gtest.h>
#include <cstring>
#include "tracing/patch_site.h"

namespace {
using trace_points::SiteBytes;

TEST(TracePatchSite, NopIsTheFiveByteNopl) {
  const uint8_t expected[] = {0x0f, 0x1f, 0x44, 0x00, 0x00};
  EXPECT_EQ(0, std::memcmp(trace_points::nop_bytes().bytes, expected, sizeof(expected)));
}

TEST(TracePatchSite, ForwardJumpIsRelativeToTheNextInstruction) {
  SiteBytes bytes{};
  ASSERT_TRUE(trace_points::jump_bytes(0xffff82d080100000, 0xffff82d080100105, bytes));
  const uint8_t expected[] = {0xe9, 0x00, 0x01, 0x00, 0x00};  // 0x105 - 5
  EXPECT_EQ(0, std::memcmp(bytes.bytes, expected, sizeof(expected)));
}

TEST(TracePatchSite, BackwardJumpIsNegative) {
  SiteBytes bytes{};
  ASSERT_TRUE(trace_points::jump_bytes(0xffff82d080100000, 0xffff82d0800fff00, bytes));
  const uint8_t expected[] = {0xe9, 0xfb, 0xfe, 0xff, 0xff};  // -0x100 - 5
  EXPECT_EQ(0, std::memcmp(bytes.bytes, expected, sizeof(expected)));
}

TEST(TracePatchSite, JumpToItsOwnEndIsZero) {
  SiteBytes bytes{};
  ASSERT_TRUE(trace_points::jump_bytes(0x1000, 0x1005, bytes));
  EXPECT_EQ(bytes.bytes[0], 0xe9);
  for (int i = 1; i < 5; ++i) EXPECT_EQ(bytes.bytes[i], 0);
}

TEST(TracePatchSite, TargetsBeyondTwoGigabytesAreRefusedAndLeaveTheBytes) {
  SiteBytes bytes = trace_points::nop_bytes();
  EXPECT_FALSE(trace_points::jump_bytes(0x1000, 0x1000 + (1ULL << 31) + 5, bytes));
  EXPECT_FALSE(trace_points::jump_bytes(0xffff82d080000000, 0x1000, bytes));
  EXPECT_EQ(0, std::memcmp(bytes.bytes, trace_points::nop_bytes().bytes, 5));
  // The extremes that do fit.
  EXPECT_TRUE(trace_points::jump_bytes(0x1000, 0x1005 + 0x7fffffffULL, bytes));
  EXPECT_TRUE(trace_points::jump_bytes(0x80001000, 0x80001005 - 0x80000000ULL, bytes));
}
}  // namespace
