#include "common/format.h"
#include <gtest/gtest.h>
#include <string>

namespace {
std::string fmt(const char* f, auto... args) {
  char buffer[128];
  format_to(buffer, sizeof(buffer), f, args...);
  return buffer;
}
}  // namespace

TEST(Format, Integers) {
  EXPECT_EQ(fmt("%d %i %u", -42, 7, 3000000000u), "-42 7 3000000000");
  EXPECT_EQ(fmt("%ld %lld", -1L, -9223372036854775807LL - 1), "-1 -9223372036854775808");
  EXPECT_EQ(fmt("%x %X %lx", 0xbeefu, 0xbeefu, 0xffff82d080000000UL), "beef BEEF ffff82d080000000");
}

TEST(Format, WidthAndFlags) {
  EXPECT_EQ(fmt("[%5d]", 42), "[   42]");
  EXPECT_EQ(fmt("[%-5d]", 42), "[42   ]");
  EXPECT_EQ(fmt("[%05d]", -42), "[-0042]");
  EXPECT_EQ(fmt("[%016lx]", 0x1234UL), "[0000000000001234]");
  EXPECT_EQ(fmt("[%6s][%-4s]", "ab", "c"), "[    ab][c   ]");
}

TEST(Format, PointersCharsStrings) {
  EXPECT_EQ(fmt("%p", reinterpret_cast<void*>(0x1000)), "0x0000000000001000");
  const char* volatile null_string = nullptr;  // volatile: no compile-time warning
  EXPECT_EQ(fmt("%c%c %s %s", 'o', 'k', "str", null_string), "ok str (null)");
  EXPECT_EQ(fmt("100%%"), "100%");
}

TEST(Format, TruncatesAndReportsFullLength) {
  char buffer[6];
  EXPECT_EQ(format_to(buffer, sizeof(buffer), "%s", "hello world"), 11u);
  EXPECT_STREQ(buffer, "hello");
  char one[1];
  EXPECT_EQ(format_to(one, 1, "abc"), 3u);
  EXPECT_STREQ(one, "");
}

TEST(Format, LengthModifiersAndNull) {
  EXPECT_EQ(fmt("%zu %llu %hu", size_t{5}, 6ull, 7), "5 6 7");
  const char* volatile null_string = nullptr;  // volatile: no compile-time warning
  EXPECT_EQ(fmt("[%s]", null_string), "[(null)]");
  EXPECT_EQ(fmt("%05d|%-4s|%4s", -42, "ab", "cd"), "-0042|ab  |  cd");
}
