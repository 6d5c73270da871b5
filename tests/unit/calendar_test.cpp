#include "time/calendar.h"
#include <gtest/gtest.h>

TEST(Calendar, KnownDates) {
  EXPECT_EQ(seconds_since_epoch({1970, 1, 1, 0, 0, 0}), 0u);
  EXPECT_EQ(seconds_since_epoch({2000, 3, 1, 0, 0, 0}), 951868800u);  // after a 400-year leap day
  EXPECT_EQ(seconds_since_epoch({2026, 11, 30, 6, 17, 34}), 1796019454u);
  EXPECT_EQ(seconds_since_epoch({2100, 3, 1, 12, 0, 0}), 4107585600u);  // 2100 is not leap
}

TEST(Calendar, Bcd) {
  EXPECT_EQ(from_bcd(0x59), 59u);
  EXPECT_EQ(from_bcd(0x00), 0u);
  EXPECT_EQ(from_bcd(0x26), 26u);
}
