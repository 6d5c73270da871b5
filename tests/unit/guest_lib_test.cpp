// Small pure pieces of the guest kernel: command line, page-table entries and the region set
// that tracks demand-paged user memory. (Formatting is shared with the hypervisor:
// common/format, tested in format_test.cpp.) Included through guest/ explicitly, since the
// hypervisor has headers of the same names.
#include <gtest/gtest.h>

#include <string>

#include "guest/lib/cmdline.h"
#include "guest/lib/page_table_entry.h"
#include "guest/kernel/process/region_set.h"

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
  constexpr auto entry = PageTableEntry::make(lib::Mfn{0x12345}, PageTableEntry::kPresent | PageTableEntry::kWritable);
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

TEST(guest_cmdline, InitArgumentsFollowDoubleDash) {
  char storage[64];
  const char* words[4];
  ASSERT_EQ(lib::cmdline_init_args("pte=direct init=/bench -- --only fork_exit  --scale 0.5", storage, sizeof(storage),
                                   words, 4),
            4u);
  EXPECT_STREQ(words[0], "--only");
  EXPECT_STREQ(words[1], "fork_exit");
  EXPECT_STREQ(words[3], "0.5");
  EXPECT_EQ(lib::cmdline_init_args("pte=direct --x", storage, sizeof(storage), words, 4), 0u) << "no lone --";
  EXPECT_EQ(lib::cmdline_init_args("a -- one two three", storage, sizeof(storage), words, 2), 2u) << "capped";
  char tiny[6];
  EXPECT_EQ(lib::cmdline_init_args("-- abc defgh", tiny, sizeof(tiny), words, 4), 1u) << "storage full";
}
