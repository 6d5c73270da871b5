// Small pure pieces of the guest kernel: formatting, command line, page-table entries and
// Included through guest/ explicitly: xen/lib has headers of the same names.
// the region set that tracks demand-paged user memory.
#include <gtest/gtest.h>

#include <string>

#include "guest/lib/cmdline.h"
#include "guest/lib/format.h"
#include "guest/lib/page_table_entry.h"
#include "guest/lib/region_set.h"

namespace {

std::string fmt(const char* f, auto... args) {
  char buffer[128];
  lib::format(buffer, sizeof(buffer), f, args...);
  return buffer;
}

}  // namespace

TEST(guest_format, Conversions) {
  EXPECT_EQ(fmt("%d %i %u", -42, 7, 3u), "-42 7 3");
  EXPECT_EQ(fmt("%x %X %lx", 255u, 255u, 0xffffffff80000000ul), "ff FF ffffffff80000000");
  EXPECT_EQ(fmt("%05d|%-4s|%4s", -42, "ab", "cd"), "-0042|ab  |  cd");
  EXPECT_EQ(fmt("%016lx", 0x1234ul), "0000000000001234");
  EXPECT_EQ(fmt("%s %c %%", "str", 'z'), "str z %");
  const char* volatile null_string = nullptr;  // volatile: keep gcc from warning at compile time
  EXPECT_EQ(fmt("%s", null_string), "(null)");
  EXPECT_EQ(fmt("%ld", -9223372036854775807L - 1), "-9223372036854775808");
  EXPECT_EQ(fmt("%zu %llu", size_t{5}, 6ull), "5 6");
  EXPECT_EQ(fmt("%p", reinterpret_cast<void*>(0x1000)), "0x1000");
}

TEST(guest_format, TruncatesAndReportsFullLength) {
  char buffer[6];
  EXPECT_EQ(lib::format(buffer, sizeof(buffer), "hello world"), 11u);
  EXPECT_STREQ(buffer, "hello");
  EXPECT_EQ(lib::format(buffer, 0, "abc"), 3u);
}

TEST(guest_cmdline, FindsValues) {
  char value[16];
  const char* line = "  pte=batched selftest=mmu  init=/segv quiet";
  ASSERT_TRUE(lib::cmdline_value(line, "pte", value, sizeof(value)));
  EXPECT_STREQ(value, "batched");
  ASSERT_TRUE(lib::cmdline_value(line, "init", value, sizeof(value)));
  EXPECT_STREQ(value, "/segv");
  ASSERT_TRUE(lib::cmdline_value(line, "quiet", value, sizeof(value)));
  EXPECT_STREQ(value, "");
  EXPECT_FALSE(lib::cmdline_value(line, "pt", value, sizeof(value)));
  EXPECT_FALSE(lib::cmdline_value("", "pte", value, sizeof(value)));
  EXPECT_FALSE(lib::cmdline_value(nullptr, "pte", value, sizeof(value)));
}

TEST(guest_cmdline, LastValueWinsAndLongValuesAreTruncated) {
  char value[4];
  ASSERT_TRUE(lib::cmdline_value("pte=direct pte=hypercall", "pte", value, sizeof(value)));
  EXPECT_STREQ(value, "hyp");
}

TEST(guest_page_table_entry, EncodesFramesAndFlags) {
  using lib::PageTableEntry;
  constexpr auto entry = PageTableEntry::make(lib::Mfn{0x12345}, PageTableEntry::kPresent |
                                                                     PageTableEntry::kWritable);
  static_assert(entry.raw() == 0x12345003);
  static_assert(entry.present() && entry.writable() && !entry.user());
  static_assert(entry.mfn() == lib::Mfn{0x12345});
  static_assert(PageTableEntry(0xfff0000000000fffull).mfn() == lib::Mfn{0});
  static_assert(entry.with_flags(PageTableEntry::kPresent).raw() == 0x12345001);
  static_assert(lib::table_index(0xffffffff80000000ull, lib::Level::l4) == 511);
  static_assert(lib::table_index(0xffffffff80000000ull, lib::Level::l3) == 510);
  static_assert(lib::table_index(0xffffffff80201000ull, lib::Level::l2) == 1);
  static_assert(lib::table_index(0xffffffff80201000ull, lib::Level::l1) == 1);
  static_assert(lib::page_ceil(4097) == 8192 && lib::page_floor(4097) == 4096);
  SUCCEED();
}

TEST(guest_region_set, AddFindRemove) {
  lib::RegionSet set;
  ASSERT_TRUE(set.add(0x1000, 0x5000));
  EXPECT_FALSE(set.add(0x4000, 0x6000));  // overlap
  EXPECT_FALSE(set.add(0x7000, 0x7000));  // empty
  EXPECT_NE(set.find(0x1000), nullptr);
  EXPECT_EQ(set.find(0x5000), nullptr);
  ASSERT_TRUE(set.remove(0x2000, 0x3000));  // hole
  EXPECT_EQ(set.size(), 2u);
  EXPECT_EQ(set.find(0x2800), nullptr);
  EXPECT_NE(set.find(0x3000), nullptr);
  ASSERT_TRUE(set.remove(0x0, 0x10000));
  EXPECT_EQ(set.size(), 0u);
}

TEST(guest_region_set, TrimsEdges) {
  lib::RegionSet set;
  ASSERT_TRUE(set.add(0x10000, 0x20000));
  ASSERT_TRUE(set.remove(0x8000, 0x12000));
  ASSERT_TRUE(set.remove(0x1f000, 0x30000));
  ASSERT_EQ(set.size(), 1u);
  EXPECT_EQ(set[0].start, 0x12000u);
  EXPECT_EQ(set[0].end, 0x1f000u);
}

TEST(guest_region_set, FindsHighestGap) {
  lib::RegionSet set;
  ASSERT_TRUE(set.add(0xf000, 0x10000));
  EXPECT_EQ(set.find_gap_below(0x10000, 0x1000, 0x2000), 0xd000u);
  ASSERT_TRUE(set.add(0xc000, 0xf000));
  EXPECT_EQ(set.find_gap_below(0x10000, 0x1000, 0x2000), 0xa000u);
  EXPECT_EQ(set.find_gap_below(0x10000, 0xb000, 0x2000), 0u);  // nothing above the floor
}

TEST(guest_region_set, FullSetRefusesSplit) {
  lib::RegionSet set;
  for (uint64_t i = 0; i < lib::RegionSet::kCapacity; ++i) {
    ASSERT_TRUE(set.add(i * 0x10000, i * 0x10000 + 0x8000));
  }
  EXPECT_FALSE(set.add(0x10000000, 0x10001000));
  EXPECT_FALSE(set.remove(0x1000, 0x2000));
}
