// The daemon's state directory: made 0700, refused when another user owns it or others may
// reach into it (tools/daemon/state_dir.h).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "tools/daemon/state_dir.h"

namespace pvhv::daemon {
namespace {

struct StateDirTest : ::testing::Test {
  std::string parent;
  void SetUp() override {
    char pattern[] = "/tmp/pvhv-state-dir-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    parent = pattern;
  }
  void TearDown() override { std::system(("rm -rf '" + parent + "'").c_str()); }
  static mode_t mode_of(const std::string& path) {
    struct stat st {};
    EXPECT_EQ(stat(path.c_str(), &st), 0);
    return st.st_mode & 07777;
  }
};

TEST_F(StateDirTest, ANewDirectoryIsTheOwnersAloneWhateverTheUmask) {
  const std::string dir = parent + "/state";
  mode_t old = umask(0);  // a umask that takes nothing away would give 0777 to a mkdir of 0777
  EXPECT_EQ(prepare_state_dir(dir, geteuid()), std::nullopt);
  umask(0077 | 0100);  // one that takes the owner's search bit too
  const std::string second = parent + "/second";
  EXPECT_EQ(prepare_state_dir(second, geteuid()), std::nullopt);
  umask(old);
  EXPECT_EQ(mode_of(dir), 0700u);
  EXPECT_EQ(mode_of(second), 0700u);
  EXPECT_EQ(prepare_state_dir(dir, geteuid()), std::nullopt);  // used again as it is
}

TEST_F(StateDirTest, ADirectoryOthersMayReachIsRefusedWithItsMode) {
  const std::string dir = parent + "/state";
  ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
  for (mode_t mode : {0755, 0750, 0701, 0710, 0770, 0707, 0704, 0740, 0702}) {
    ASSERT_EQ(chmod(dir.c_str(), mode), 0);
    auto refused = prepare_state_dir(dir, geteuid());
    ASSERT_TRUE(refused) << std::oct << mode;
    char expected[64];
    std::snprintf(expected, sizeof(expected), "is open to others (mode %04o)", unsigned(mode));
    EXPECT_NE(refused->find("state directory " + dir + " " + expected), std::string::npos) << *refused;
    EXPECT_EQ(mode_of(dir), mode);  // reported, never changed behind the user's back
  }
  ASSERT_EQ(chmod(dir.c_str(), 0700), 0);
  EXPECT_EQ(prepare_state_dir(dir, geteuid()), std::nullopt);
}

TEST_F(StateDirTest, ADirectoryOfAnotherUserOrNoDirectoryIsRefused) {
  const std::string dir = parent + "/state";
  ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
  auto refused = prepare_state_dir(dir, geteuid() + 1);
  ASSERT_TRUE(refused);
  EXPECT_NE(refused->find("state directory " + dir + " is owned by uid " + std::to_string(geteuid()) +
                          ", not by this user (uid " + std::to_string(geteuid() + 1) + ")"),
            std::string::npos)
      << *refused;
  const std::string file = parent + "/file";
  FILE* f = std::fopen(file.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fclose(f);
  refused = prepare_state_dir(file, geteuid());
  ASSERT_TRUE(refused);
  EXPECT_NE(refused->find("is not a directory"), std::string::npos) << *refused;
  refused = prepare_state_dir(parent + "/missing/state", geteuid());
  ASSERT_TRUE(refused);
  EXPECT_NE(refused->find("No such file or directory"), std::string::npos) << *refused;
}

}  // namespace
}  // namespace pvhv::daemon
