// The filter on a domU's console text: Xen's guest_console_write keeps printable characters
// (its isprint: 0x20-0x7e, 0xa0-0xff), tabs and newlines, nothing else.
#include <gtest/gtest.h>
#include <string>
#include "console/guest_text_filter.h"

namespace console {
namespace {
std::string filtered(const std::string& text) {
  std::string out(text.size(), '\0');
  out.resize(filter_guest_text(text.data(), text.size(), out.data()));
  return out;
}

TEST(ConsoleGuestTextFilter, KeepsPrintableTextTabsAndNewlines) {
  EXPECT_EQ(filtered("hello, world\tx ~!\n"), "hello, world\tx ~!\n");
}

TEST(ConsoleGuestTextFilter, DropsACarriageReturnThatWouldForgeAHypervisorLine) {
  EXPECT_EQ(filtered("\r(XEN) audit: clean\n"), "(XEN) audit: clean\n");
}

TEST(ConsoleGuestTextFilter, DropsTheControlBytesOfEscapeSequences) {
  EXPECT_EQ(filtered("\x1b[2J\x1b[1;1Hcleared"), "[2J[1;1Hcleared");
  EXPECT_EQ(filtered(std::string("\x9b") + "31m\x07\b\x7f\x0b\x0c"), "31m");  // 8-bit CSI, BEL, BS, DEL, VT, FF
  EXPECT_EQ(filtered(std::string("a\0b", 3)), "ab");
}

TEST(ConsoleGuestTextFilter, ClassifiesEveryByteAsXen) {
  for (int byte = 0; byte < 256; ++byte) {
    bool printable = (byte >= 0x20 && byte <= 0x7e) || byte >= 0xa0 || byte == '\t';
    EXPECT_EQ(is_guest_printable(char(byte)), printable) << byte;
  }
}

TEST(ConsoleGuestTextFilter, FiltersInPlace) {
  char text[] =
      "a\rb\x1b"
      "c";
  size_t n = filter_guest_text(text, sizeof(text) - 1, text);
  EXPECT_EQ(std::string(text, n), "abc");
}
}  // namespace
}  // namespace console
