// The host builder's layout (tools/libxenguest/pv_layout): Xen 4.17 libxenguest's order and
// arithmetic, worked through by hand for the numbers below (xg_dom_core.c xc_dom_build_image,
// xg_dom_x86.c alloc_pgtables_pv / count_pgtables / setup_pgtables_pv).
#include <gtest/gtest.h>

#include <vector>

#include "tools/libxenguest/pv_layout.h"

using namespace xenguest;

namespace {

constexpr uint64_t kBase = 0xffffffff80000000ull;

// Our reference kernel's shape: loaded at VIRT_BASE, 0x15e000 bytes in memory (text, data, bss).
KernelPlacement reference_kernel() { return {kBase, kBase, kBase + 0x15e000}; }

std::vector<uint64_t> identity_plus(uint64_t pages, uint64_t offset) {
  std::vector<uint64_t> p2m(pages);
  for (uint64_t i = 0; i < pages; ++i) p2m[i] = i + offset;
  return p2m;
}

}  // namespace

// 32 MiB, a 0x2001-byte ramdisk: kernel 350 pages at pfn 0, ramdisk 3 pages, p2m 8192 * 8 bytes
// = 16 pages, start_info, xenstore, console (369..371); the mapping must reach a 4 MiB boundary
// 129 pages (boot stack and 512 KiB) past the tables: 0x400000 from VIRT_BASE, needing one L4,
// one L3, one L2 and two L1s (372..376); the boot stack at 377; padding up to pfn 1024.
TEST(LibxenguestPvLayout, ReferenceKernelIn32MiB) {
  PvLayout layout;
  ASSERT_EQ(lay_out(reference_kernel(), 0x2001, 8192, layout), LayoutError::none);
  EXPECT_EQ(layout.kernel.pfn, 0u);
  EXPECT_EQ(layout.kernel.pages, 350u);
  EXPECT_EQ(layout.kernel.vstart, kBase);
  EXPECT_EQ(layout.kernel.vend, kBase + 0x15e000);
  ASSERT_TRUE(layout.has_ramdisk);
  EXPECT_EQ(layout.ramdisk.pfn, 350u);
  EXPECT_EQ(layout.ramdisk.pages, 3u);
  EXPECT_EQ(layout.ramdisk.vstart, kBase + 350 * 4096);
  EXPECT_EQ(layout.ramdisk.vend, kBase + 350 * 4096 + 0x2001);
  EXPECT_EQ(layout.p2m.pfn, 353u);
  EXPECT_EQ(layout.p2m.pages, 16u);
  EXPECT_EQ(layout.start_info_pfn, 369u);
  EXPECT_EQ(layout.xenstore_pfn, 370u);
  EXPECT_EQ(layout.console_pfn, 371u);
  EXPECT_EQ(layout.page_tables.pfn, 372u);
  EXPECT_EQ(layout.page_tables.pages, 5u);
  EXPECT_EQ(layout.page_tables.vstart, kBase + 372 * 4096);
  EXPECT_EQ(layout.levels[3].pfn, 372u);
  EXPECT_EQ(layout.levels[3].tables, 1u);
  EXPECT_EQ(layout.levels[2].pfn, 373u);
  EXPECT_EQ(layout.levels[2].tables, 1u);
  EXPECT_EQ(layout.levels[1].pfn, 374u);
  EXPECT_EQ(layout.levels[1].tables, 1u);
  EXPECT_EQ(layout.levels[0].pfn, 375u);
  EXPECT_EQ(layout.levels[0].tables, 2u);
  EXPECT_EQ(layout.boot_stack_pfn, 377u);
  EXPECT_EQ(layout.virt_alloc_end, kBase + 378 * 4096);
  EXPECT_EQ(layout.virt_pgtab_end, kBase + 0x400000);
  EXPECT_EQ(layout.initial_rsp(), kBase + 378 * 4096);
  EXPECT_EQ(layout.start_info_address(), kBase + 369 * 4096);
  EXPECT_EQ(layout.mapping_from, 0xffff80000000ull);
  EXPECT_EQ(layout.mapping_to, 0xffff803fffffull);
}

TEST(LibxenguestPvLayout, NoRamdiskMovesEverythingDown) {
  PvLayout layout;
  ASSERT_EQ(lay_out(reference_kernel(), 0, 8192, layout), LayoutError::none);
  EXPECT_FALSE(layout.has_ramdisk);
  EXPECT_EQ(layout.p2m.pfn, 350u);
  EXPECT_EQ(layout.start_info_pfn, 366u);
  EXPECT_EQ(layout.page_tables.pfn, 369u);
  EXPECT_EQ(layout.boot_stack_pfn, 374u);
}

// A kernel linked 16 MiB above VIRT_BASE (as Linux is): the pfns below it are padding.
TEST(LibxenguestPvLayout, KernelAboveVirtBaseIsPaddedUpTo) {
  PvLayout layout;
  KernelPlacement kernel{kBase, kBase + 0x1000000, kBase + 0x1000000 + 0x9ff0b8};
  ASSERT_EQ(lay_out(kernel, 0, 65536, layout), LayoutError::none);
  EXPECT_EQ(layout.kernel.pfn, 4096u);
  EXPECT_EQ(layout.kernel.pages, 0xa00u);
  EXPECT_EQ(layout.p2m.pfn, 4096u + 0xa00u);
  EXPECT_EQ(layout.p2m.pages, 128u);
  // 26 MiB + a few pages mapped: the mapping ends at VIRT_BASE + 28 MiB, 14 L1s.
  EXPECT_EQ(layout.virt_pgtab_end, kBase + 0x1c00000);
  EXPECT_EQ(layout.levels[0].tables, 14u);
  EXPECT_EQ(layout.page_tables.pages, 17u);
}

// The tables themselves grow the mapping: when they no longer fit below the 4 MiB boundary the
// next one is tried (alloc_pgtables_pv's loop).
TEST(LibxenguestPvLayout, MappingGrowsUntilItHoldsItsTables) {
  PvLayout layout;
  // A kernel ending 2 pages short of 4 MiB - 129 pages - 4 tables: no room for the fifth table.
  uint64_t kernel_pages = 1024 - 129 - 5 - 16 - 3 + 1;
  KernelPlacement kernel{kBase, kBase, kBase + kernel_pages * 4096};
  ASSERT_EQ(lay_out(kernel, 0, 8192, layout), LayoutError::none);
  EXPECT_EQ(layout.virt_pgtab_end, kBase + 0x800000);
  EXPECT_EQ(layout.levels[0].tables, 4u);
  EXPECT_LE(layout.virt_alloc_end + 128 * 4096, layout.virt_pgtab_end);
}

TEST(LibxenguestPvLayout, TooLittleMemoryIsRefused) {
  PvLayout layout;
  EXPECT_EQ(lay_out(reference_kernel(), 0, 300, layout), LayoutError::out_of_memory);         // the kernel alone
  EXPECT_EQ(lay_out(reference_kernel(), 0x100000, 400, layout), LayoutError::out_of_memory);  // + ramdisk
  EXPECT_EQ(lay_out(reference_kernel(), 0, 600, layout), LayoutError::mapping_too_large);     // 4 MiB mapped
  EXPECT_EQ(lay_out(reference_kernel(), 0, 1023, layout), LayoutError::mapping_too_large);    // pfn 1023 mapped
  EXPECT_EQ(lay_out(reference_kernel(), 0, 1024, layout), LayoutError::none);                 // exactly the mapping
  EXPECT_EQ(lay_out(reference_kernel(), ~0ull - 10, 8192, layout), LayoutError::bad_size);
}

TEST(LibxenguestPvLayout, HostileKernelRangesAreRefused) {
  PvLayout layout;
  EXPECT_EQ(lay_out({kBase, kBase - 4096, kBase + 4096}, 0, 8192, layout), LayoutError::kernel_below_base);
  EXPECT_EQ(lay_out({kBase, kBase + 0x100000000ull, kBase + 0x100001000ull}, 0, 8192, layout),  // wraps
            LayoutError::kernel_below_base);
  EXPECT_EQ(lay_out({kBase, kBase + 0x800, kBase + 4096}, 0, 8192, layout), LayoutError::kernel_below_base);
  EXPECT_EQ(lay_out({kBase, kBase + 4096, kBase}, 0, 8192, layout), LayoutError::kernel_below_base);
  EXPECT_EQ(lay_out({~0ull - 0xfff, ~0ull - 0xfff, ~0ull}, 0, 8192, layout), LayoutError::bad_size);
  EXPECT_EQ(lay_out(reference_kernel(), 0, 0, layout), LayoutError::bad_size);
  EXPECT_EQ(lay_out({kBase, kBase + 0x40000000ull, kBase + 0x40001000ull}, 0, 8192, layout),  // 1 GiB of padding
            LayoutError::out_of_memory);
}

// setup_pgtables_pv for the 32 MiB layout: L4[511] -> L3, L3[510] -> L2, L2[0..1] -> the L1s,
// the L1s map pfn 0..1023, the page-table frames read-only.
TEST(LibxenguestPvLayout, PageTableEntries) {
  PvLayout layout;
  ASSERT_EQ(lay_out(reference_kernel(), 0x2001, 8192, layout), LayoutError::none);
  std::vector<uint64_t> p2m = identity_plus(8192, 0x40000);
  uint64_t entries[512];
  ASSERT_TRUE(page_table_entries(layout, p2m.data(), 372, entries));
  for (unsigned i = 0; i < 512; ++i) EXPECT_EQ(entries[i], i == 511 ? ((0x40000 + 373ull) << 12) | 0x67 : 0) << i;
  ASSERT_TRUE(page_table_entries(layout, p2m.data(), 373, entries));
  for (unsigned i = 0; i < 512; ++i) EXPECT_EQ(entries[i], i == 510 ? ((0x40000 + 374ull) << 12) | 0x67 : 0) << i;
  ASSERT_TRUE(page_table_entries(layout, p2m.data(), 374, entries));
  EXPECT_EQ(entries[0], ((0x40000 + 375ull) << 12) | 0x67);
  EXPECT_EQ(entries[1], ((0x40000 + 376ull) << 12) | 0x67);
  for (unsigned i = 2; i < 512; ++i) EXPECT_EQ(entries[i], 0u) << i;
  ASSERT_TRUE(page_table_entries(layout, p2m.data(), 375, entries));
  for (uint64_t i = 0; i < 512; ++i) {
    uint64_t bits = (i >= 372 && i <= 376) ? 0x21 : 0x23;  // the tables map themselves read-only
    EXPECT_EQ(entries[i], ((0x40000 + i) << 12) | bits) << i;
  }
  ASSERT_TRUE(page_table_entries(layout, p2m.data(), 376, entries));
  for (uint64_t i = 0; i < 512; ++i) {
    uint64_t pfn = 512 + i;
    EXPECT_EQ(entries[i], ((0x40000 + pfn) << 12) | 0x23) << i;
  }
  EXPECT_FALSE(page_table_entries(layout, p2m.data(), 377, entries));  // the boot stack
  EXPECT_EQ(page_table_level(layout, 372), 3);
  EXPECT_EQ(page_table_level(layout, 376), 0);
  EXPECT_EQ(page_table_level(layout, 371), -1);
}
