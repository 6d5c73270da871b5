#include "control/pause_count.h"

#include <gtest/gtest.h>

#include "abi/xen_abi.h"

namespace {
using control::ControllerPauseCount;

TEST(ControllerPauseCount, StartsUnpaused) {
  ControllerPauseCount count;
  EXPECT_FALSE(count.paused());
  EXPECT_EQ(count.count(), 0u);
}

TEST(ControllerPauseCount, UnpauseWithoutPauseIsEinval) {
  ControllerPauseCount count;
  EXPECT_EQ(count.unpause(), -XEN_EINVAL);
  EXPECT_EQ(count.count(), 0u);
}

TEST(ControllerPauseCount, PausesNest) {
  ControllerPauseCount count;
  EXPECT_EQ(count.pause(), 0);
  EXPECT_EQ(count.pause(), 0);
  EXPECT_TRUE(count.paused());
  EXPECT_EQ(count.unpause(), 0);
  EXPECT_TRUE(count.paused()) << "one unpause of two pauses leaves the domain paused";
  EXPECT_EQ(count.unpause(), 0);
  EXPECT_FALSE(count.paused());
  EXPECT_EQ(count.unpause(), -XEN_EINVAL);
}

TEST(ControllerPauseCount, CappedAt255WithEoverflow) {
  ControllerPauseCount count;
  for (unsigned i = 0; i < 255; ++i) ASSERT_EQ(count.pause(), 0) << i;
  EXPECT_EQ(count.pause(), -XEN_EOVERFLOW);
  EXPECT_EQ(count.count(), 255u) << "a refused pause leaves the count alone";
  for (unsigned i = 0; i < 255; ++i) ASSERT_EQ(count.unpause(), 0) << i;
  EXPECT_FALSE(count.paused());
  EXPECT_EQ(count.unpause(), -XEN_EINVAL);
}
}  // namespace
