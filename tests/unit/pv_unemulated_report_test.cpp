#include "pv/rules/unemulated_report.h"
#include <gtest/gtest.h>
#include <string>

namespace {
std::string formatted(const uint8_t* bytes, size_t count, size_t size = 64) {
  char out[64];
  size_t n = unemulated_report::format_bytes(bytes, count, out, size);
  EXPECT_EQ(n, std::string(out).size());
  return out;
}
}  // namespace

TEST(UnemulatedReport, BytesAsSpacedHexPairs) {
  const uint8_t hlt[] = {0xf4};
  const uint8_t mov_cr0[] = {0x0f, 0x20, 0xc0};
  EXPECT_EQ(formatted(hlt, 1), "f4");
  EXPECT_EQ(formatted(mov_cr0, 3), "0f 20 c0");
}

TEST(UnemulatedReport, NoReadableByteSaysNone) { EXPECT_EQ(formatted(nullptr, 0), "none"); }

TEST(UnemulatedReport, FifteenBytesFitTheReportBuffer) {
  uint8_t bytes[15];
  for (unsigned i = 0; i < 15; ++i) bytes[i] = uint8_t(0xf0 + i);
  std::string text = formatted(bytes, 15, 3 * 15 + 1);
  EXPECT_EQ(text.size(), 3u * 15 - 1);
  EXPECT_EQ(text.substr(text.size() - 2), "fe");
}

TEST(UnemulatedReport, TruncatesToTheBufferNeverPastIt) {
  const uint8_t bytes[] = {0x0f, 0x20, 0xc0};
  char out[6];
  out[5] = 'X';
  EXPECT_EQ(unemulated_report::format_bytes(bytes, 3, out, 5), 4u);
  EXPECT_EQ(std::string(out), "0f 2");
  EXPECT_EQ(out[5], 'X');
  EXPECT_EQ(unemulated_report::format_bytes(bytes, 3, out, 0), 0u);
}

TEST(UnemulatedReport, EachDomainLogsItsFirstFewAndEveryFatalOne) {
  for (uint32_t n = 0; n < unemulated_report::kLoggedPerDomain; ++n)
    EXPECT_TRUE(unemulated_report::should_log(n, false));
  EXPECT_FALSE(unemulated_report::should_log(unemulated_report::kLoggedPerDomain, false));
  EXPECT_FALSE(unemulated_report::should_log(1000000, false));
  EXPECT_TRUE(unemulated_report::should_log(1000000, true));
}

TEST(UnemulatedReport, OnlyGeneralProtectionAndInvalidOpcodeAreNamed) {
  EXPECT_STREQ(unemulated_report::vector_name(13), "#GP");
  EXPECT_STREQ(unemulated_report::vector_name(6), "#UD");
  EXPECT_EQ(unemulated_report::vector_name(14), nullptr);
  EXPECT_EQ(unemulated_report::vector_name(0), nullptr);
}
