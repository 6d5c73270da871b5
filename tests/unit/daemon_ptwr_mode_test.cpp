#include "tools/daemon/ptwr_mode.h"

#include <cerrno>

#include <gtest/gtest.h>

namespace {
using namespace pvhv::daemon;

TEST(DaemonPtwrMode, NamesBothWays) {
  EXPECT_EQ(ptwr_mode_from_name("emulate"), 0u);
  EXPECT_EQ(ptwr_mode_from_name("writable"), 1u);
  EXPECT_EQ(ptwr_mode_from_name("adaptive"), 2u);
  EXPECT_FALSE(ptwr_mode_from_name("Writable"));
  EXPECT_FALSE(ptwr_mode_from_name(""));
  EXPECT_STREQ(ptwr_mode_name(0), "emulate");
  EXPECT_STREQ(ptwr_mode_name(1), "writable");
  EXPECT_STREQ(ptwr_mode_name(2), "adaptive");
}

TEST(DaemonPtwrMode, AbsentOrNullModeReads) {
  auto absent = ptwr_mode_argument(Json{{"dom", "1"}});
  ASSERT_TRUE(std::holds_alternative<std::optional<unsigned>>(absent));
  EXPECT_FALSE(std::get<std::optional<unsigned>>(absent));
  auto null = ptwr_mode_argument(Json{{"dom", "1"}, {"mode", nullptr}});
  ASSERT_TRUE(std::holds_alternative<std::optional<unsigned>>(null));
  EXPECT_FALSE(std::get<std::optional<unsigned>>(null));
  auto set = ptwr_mode_argument(Json{{"mode", "writable"}});
  ASSERT_TRUE(std::holds_alternative<std::optional<unsigned>>(set));
  EXPECT_EQ(std::get<std::optional<unsigned>>(set), 1u);
}

TEST(DaemonPtwrMode, BadModesAreEinval) {
  for (const Json& bad : {Json("fast"), Json(1), Json(true), Json::array({"emulate"}), Json("emulate ")}) {
    auto parsed = ptwr_mode_argument(Json{{"mode", bad}});
    ASSERT_TRUE(std::holds_alternative<Failure>(parsed)) << bad.dump();
    EXPECT_EQ(std::get<Failure>(parsed).error, kEinval) << bad.dump();
  }
}

TEST(DaemonPtwrMode, XensEnosysSaysTheModeIsOurs) {
  Failure enosys = ptwr_mode_failure(ENOSYS, 3);
  EXPECT_EQ(enosys.error, kEopnotsupp);
  EXPECT_NE(enosys.message.find("Xen 4.17"), std::string::npos);
  EXPECT_EQ(enosys.message.find('\n'), std::string::npos) << "one line";
  Failure esrch = ptwr_mode_failure(ESRCH, 7);
  EXPECT_EQ(esrch.error, ESRCH);
  EXPECT_NE(esrch.message.find("domain 7"), std::string::npos);
  EXPECT_EQ(ptwr_mode_failure(EPERM, 1).error, EPERM);
}
// On Xen 4.17 (no such control) a config asking for emulate gets what Xen does anyway.
TEST(DaemonPtwrMode, ConfigEmulateIsFineWithoutTheControl) {
  EXPECT_TRUE(ptwr_mode_absent_is_fine("emulate", ptwr_mode_failure(ENOSYS, 1)));
  EXPECT_FALSE(ptwr_mode_absent_is_fine("writable", ptwr_mode_failure(ENOSYS, 1)));
  EXPECT_FALSE(ptwr_mode_absent_is_fine("emulate", ptwr_mode_failure(EPERM, 1)));
}
}  // namespace
