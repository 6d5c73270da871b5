// The initrd parser must find files in well-formed newc archives and fail cleanly (never
// read out of bounds: ASan watches) on truncated or corrupt ones.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "guest/kernel/process/cpio.h"

namespace {

void pad4(std::string& s) {
  while (s.size() % 4) s.push_back('\0');
}

std::string newc_entry(const std::string& name, const std::string& data, unsigned mode = 0100755) {
  char header[111];
  std::snprintf(header, sizeof(header), "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X", 1u, mode, 0u, 0u,
                1u, 0u, static_cast<unsigned>(data.size()), 0u, 0u, 0u, 0u, static_cast<unsigned>(name.size() + 1), 0u);
  std::string out(header, 110);
  out += name;
  out.push_back('\0');
  pad4(out);
  out += data;
  pad4(out);
  return out;
}

std::string archive(std::initializer_list<std::pair<std::string, std::string>> files) {
  std::string out;
  for (auto& [name, data] : files) out += newc_entry(name, data);
  out += newc_entry("TRAILER!!!", "", 0);
  return out;
}

lib::CpioStatus find(const std::string& a, const char* path, lib::CpioEntry& entry) {
  return lib::cpio_find(a.data(), a.size(), path, entry);
}

}  // namespace

TEST(guest_cpio, FindsFileByAbsoluteOrRelativePath) {
  std::string a = archive({{"segv", "xyz"}, {"init", "hello"}});
  lib::CpioEntry entry;
  for (const char* path : {"/init", "init", "./init"}) {
    ASSERT_EQ(find(a, path, entry), lib::CpioStatus::ok) << path;
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(entry.data), entry.size), "hello");
    EXPECT_STREQ(entry.name, "init");
  }
}

TEST(guest_cpio, MissingFileIsNotFound) {
  std::string a = archive({{"init", "hello"}});
  lib::CpioEntry entry;
  EXPECT_EQ(find(a, "/sbin/init", entry), lib::CpioStatus::not_found);
}

TEST(guest_cpio, DirectoriesAreNotFiles) {
  std::string a = newc_entry("init", "", 040755) + newc_entry("TRAILER!!!", "", 0);
  lib::CpioEntry entry;
  EXPECT_EQ(find(a, "/init", entry), lib::CpioStatus::not_found);
}

TEST(guest_cpio, EveryTruncationFailsCleanly) {
  std::string a = archive({{"init", std::string(1000, 'x')}});
  lib::CpioEntry entry;
  for (size_t length = 0; length < a.size() - newc_entry("TRAILER!!!", "", 0).size(); ++length) {
    std::string cut = a.substr(0, length);
    lib::CpioStatus status = lib::cpio_find(cut.data(), cut.size(), "/init", entry);
    EXPECT_EQ(status, lib::CpioStatus::truncated) << "length " << length;
  }
}

TEST(guest_cpio, MissingTrailerIsTruncation) {
  std::string a = newc_entry("init", "abc");
  lib::CpioEntry entry;
  EXPECT_EQ(find(a, "/other", entry), lib::CpioStatus::truncated);
}

TEST(guest_cpio, BadMagicIsRejected) {
  std::string a = archive({{"init", "abc"}});
  a[5] = '7';  // 070707 is the old binary-portable format
  lib::CpioEntry entry;
  EXPECT_EQ(find(a, "/init", entry), lib::CpioStatus::bad_magic);
}

TEST(guest_cpio, NonHexFieldIsRejected) {
  std::string a = archive({{"init", "abc"}});
  a[6 + 8 * 6 + 3] = 'g';  // inside the file size
  lib::CpioEntry entry;
  EXPECT_EQ(find(a, "/init", entry), lib::CpioStatus::bad_field);
}

TEST(guest_cpio, HugeFileSizeIsTruncationNotOverflow) {
  std::string a = archive({{"init", "abc"}});
  a.replace(6 + 8 * 6, 8, "FFFFFFFF");
  lib::CpioEntry entry;
  EXPECT_EQ(find(a, "/init", entry), lib::CpioStatus::truncated);
}

TEST(guest_cpio, NameWithoutTerminatorIsRejected) {
  std::string a = archive({{"init", "abc"}});
  a[110 + 4] = 'X';  // overwrite the NUL after "init"
  lib::CpioEntry entry;
  EXPECT_EQ(find(a, "/init", entry), lib::CpioStatus::bad_name);
}

TEST(guest_cpio, ZeroNameSizeIsRejected) {
  std::string a = archive({{"init", "abc"}});
  a.replace(6 + 8 * 11, 8, "00000000");
  lib::CpioEntry entry;
  EXPECT_EQ(find(a, "/init", entry), lib::CpioStatus::bad_name);
}

TEST(guest_cpio, ReaderStopsAfterError) {
  std::string a = "garbage that is long enough to hold a header" + std::string(100, '0');
  lib::CpioReader reader(a.data(), a.size());
  lib::CpioEntry entry;
  EXPECT_EQ(reader.next(entry), lib::CpioStatus::bad_magic);
  EXPECT_EQ(reader.next(entry), lib::CpioStatus::bad_magic);
}

TEST(guest_cpio, StatusNamesAreDistinct) {
  EXPECT_STRNE(lib::cpio_status_name(lib::CpioStatus::truncated), lib::cpio_status_name(lib::CpioStatus::bad_magic));
}
