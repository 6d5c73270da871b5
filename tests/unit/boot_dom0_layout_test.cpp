#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include <xen/xen.h>

#include "boot/dom0_layout.h"

using namespace boot;

namespace {

constexpr uint64_t MiB = 1ull << 20;
constexpr uint64_t start_info_bytes = sizeof(start_info_t) + sizeof(dom0_vga_console_info_t);

// A Linux-like kernel: VIRT_BASE -2 GiB, loaded at +16 MiB, just under 10 MiB long. This is
// the test kernel the expected numbers below were taken from: Xen 4.17 booted under QEMU TCG
// printed them in its "VIRTUAL MEMORY ARRANGEMENT" table.
XenKernelInfo linux_kernel() {
  XenKernelInfo info;
  info.virt_base = 0xffffffff80000000ull;
  info.virt_kstart = 0xffffffff81000000ull;
  info.virt_kend = 0xffffffff819ff0b8ull;
  info.entry = 0xffffffff81001000ull;
  return info;
}

}  // namespace

// Xen 4.17, dom0_mem=64M, no initrd:
//  Loaded kernel: ffffffff81000000->ffffffff819ff0b8
//  Phys-Mach map: ffffffff81a00000->ffffffff81a20000
//  Start info:    ffffffff81a20000->ffffffff81a204b8
//  Page tables:   ffffffff81a21000->ffffffff81a32000
//  Boot stack:    ffffffff81a32000->ffffffff81a33000
//  TOTAL:         ffffffff80000000->ffffffff81c00000
//  Dom0 alloc.:   32 MiB chunk (8192 pages to be allocated)
TEST(BootDom0Layout, LinuxKernelWithoutInitrdMatchesXen) {
  Dom0Layout layout;
  ASSERT_EQ(compute_dom0_layout(linux_kernel(), 0, 16384, layout), Dom0LayoutError::none);
  EXPECT_EQ(start_info_bytes, 0x4b8u);
  EXPECT_EQ(layout.kernel, (VirtualRange{0xffffffff81000000ull, 0xffffffff819ff0b8ull}));
  EXPECT_EQ(layout.initrd, (VirtualRange{0xffffffff81a00000ull, 0xffffffff81a00000ull}));
  EXPECT_EQ(layout.p2m, (VirtualRange{0xffffffff81a00000ull, 0xffffffff81a20000ull}));
  EXPECT_EQ(layout.start_info, (VirtualRange{0xffffffff81a20000ull, 0xffffffff81a20000ull + start_info_bytes}));
  // L4 + one L3 + one L2 + 14 L1s for [-2 GiB, -2 GiB + 28 MiB).
  EXPECT_EQ(layout.tables, (PageTableCounts{1, 1, 1, 14}));
  EXPECT_EQ(layout.nr_pt_frames(), 17u);
  EXPECT_EQ(layout.page_tables, (VirtualRange{0xffffffff81a21000ull, 0xffffffff81a32000ull}));
  EXPECT_EQ(layout.boot_stack, (VirtualRange{0xffffffff81a32000ull, 0xffffffff81a33000ull}));
  EXPECT_EQ(layout.bootstrap, (VirtualRange{0xffffffff80000000ull, 0xffffffff81c00000ull}));
  EXPECT_EQ(layout.bootstrap_pages, 28 * MiB / 4096);
  EXPECT_EQ(layout.allocation_order, 13u);  // 28 MiB rounds to a 32 MiB chunk
  EXPECT_EQ(layout.initial_rsp, 0xffffffff81a33000ull);
  EXPECT_EQ(layout.initial_rsi, 0xffffffff81a20000ull);
  EXPECT_EQ(layout.entry, 0xffffffff81001000ull);
}

// Xen 4.17, dom0_mem=256M, a 3 MiB + 123 byte initrd:
//  Init. ramdisk: ffffffff81a00000->ffffffff81d0007b
//  Phys-Mach map: ffffffff81d01000->ffffffff81d81000
//  Start info:    ffffffff81d81000->ffffffff81d814b8
//  Page tables:   ffffffff81d82000->ffffffff81d95000
//  Boot stack:    ffffffff81d95000->ffffffff81d96000
//  TOTAL:         ffffffff80000000->ffffffff82000000
//  Dom0 alloc.:   32 MiB chunk (56575 pages to be allocated = 65536 - 8192 - 769)
TEST(BootDom0Layout, InitrdLayoutMatchesXen) {
  Dom0Layout layout;
  uint64_t initrd = 3 * MiB + 123;
  ASSERT_EQ(compute_dom0_layout(linux_kernel(), initrd, 65536, layout), Dom0LayoutError::none);
  EXPECT_EQ(layout.initrd, (VirtualRange{0xffffffff81a00000ull, 0xffffffff81d0007bull}));
  EXPECT_EQ(layout.initrd_pages, 769u);
  EXPECT_EQ(layout.p2m, (VirtualRange{0xffffffff81d01000ull, 0xffffffff81d81000ull}));
  EXPECT_EQ(layout.start_info, (VirtualRange{0xffffffff81d81000ull, 0xffffffff81d814b8ull}));
  EXPECT_EQ(layout.page_tables, (VirtualRange{0xffffffff81d82000ull, 0xffffffff81d95000ull}));
  EXPECT_EQ(layout.boot_stack, (VirtualRange{0xffffffff81d95000ull, 0xffffffff81d96000ull}));
  EXPECT_EQ(layout.bootstrap, (VirtualRange{0xffffffff80000000ull, 0xffffffff82000000ull}));
  EXPECT_EQ(layout.allocation_order, 13u);
  EXPECT_EQ(layout.boot_stack.start, layout.page_tables.end);
  EXPECT_EQ(layout.page_tables.size(), layout.nr_pt_frames() * 4096);
  // At least 512 KiB of padding after the stack, and a 4 MiB-aligned end.
  EXPECT_GE(layout.bootstrap.end - layout.boot_stack.end, 512u * 1024);
  EXPECT_EQ(layout.bootstrap.end % (4 * MiB), 0u);
}

TEST(BootDom0Layout, PaddingRuleAddsFourMegabytes) {
  // Choose a kernel end so the stack lands within 512 KiB of a 4 MiB boundary.
  XenKernelInfo kernel = linux_kernel();
  Dom0Layout probe;
  ASSERT_EQ(compute_dom0_layout(kernel, 0, 16384, probe), Dom0LayoutError::none);
  uint64_t shift = 0xffffffff81c00000ull - 0x40000 - probe.boot_stack.end;
  kernel.virt_kend += shift;
  Dom0Layout layout;
  ASSERT_EQ(compute_dom0_layout(kernel, 0, 16384, layout), Dom0LayoutError::none);
  // The stack ends within 512 KiB of 0xffffffff81c00000, so Xen's rule adds 4 MiB.
  EXPECT_LT(0xffffffff81c00000ull - layout.boot_stack.end, 512u * 1024);
  EXPECT_EQ(layout.bootstrap.end, 0xffffffff82000000ull);
  EXPECT_EQ(layout.tables.l1, 16u);
}

TEST(BootDom0Layout, FixedPointCoversItsOwnTables) {
  XenKernelInfo kernel = linux_kernel();
  for (uint64_t pages : {8192ull, 16384ull, 262144ull, 1048576ull, 4194304ull}) {
    Dom0Layout layout;
    ASSERT_EQ(compute_dom0_layout(kernel, 0, pages, layout), Dom0LayoutError::none) << pages;
    uint64_t span = layout.bootstrap.end - layout.bootstrap.start;
    uint64_t l1 = (span + (2 * MiB - 1)) / (2 * MiB);
    EXPECT_EQ(layout.tables.l1, l1) << pages;
    EXPECT_GE(layout.bootstrap.end, layout.boot_stack.end + 512 * 1024);
    std::vector<PageTableFrame> frames(layout.nr_pt_frames());
    EXPECT_EQ(plan_page_table_frames(layout, frames.data(), frames.size()), layout.nr_pt_frames());
  }
}

TEST(BootDom0Layout, PageTablePlanOrder) {
  Dom0Layout layout;
  ASSERT_EQ(compute_dom0_layout(linux_kernel(), 0, 16384, layout), Dom0LayoutError::none);
  std::vector<PageTableFrame> frames(32);
  ASSERT_EQ(plan_page_table_frames(layout, frames.data(), frames.size()), 17u);
  EXPECT_EQ(frames[0].level, 4);
  EXPECT_EQ(frames[1].level, 1);
  EXPECT_EQ(frames[1].covers, 0xffffffff80000000ull);
  EXPECT_EQ(frames[2].level, 2);
  EXPECT_EQ(frames[2].covers, 0xffffffff80000000ull);
  EXPECT_EQ(frames[3].level, 3);
  EXPECT_EQ(frames[3].covers, 0xffffff8000000000ull);
  EXPECT_EQ(frames[4].level, 1);
  EXPECT_EQ(frames[4].covers, 0xffffffff80200000ull);
  EXPECT_EQ(frames[16].covers, 0xffffffff81a00000ull);
  // A too-small buffer still reports the full count without writing past it.
  EXPECT_EQ(plan_page_table_frames(layout, frames.data(), 2), 17u);
}

TEST(BootDom0Layout, RegionCrossingGigabyteNeedsSecondL2) {
  XenKernelInfo kernel;
  kernel.virt_base = 0x3fe00000;  // 2 MiB below 1 GiB
  kernel.virt_kstart = 0x3fe00000;
  kernel.virt_kend = 0x40100000;
  kernel.entry = kernel.virt_kstart;
  Dom0Layout layout;
  ASSERT_EQ(compute_dom0_layout(kernel, 0, 16384, layout), Dom0LayoutError::none);
  EXPECT_EQ(layout.tables.l2, 2u);
  std::vector<PageTableFrame> frames(layout.nr_pt_frames());
  ASSERT_EQ(plan_page_table_frames(layout, frames.data(), frames.size()), layout.nr_pt_frames());
  // L4, L1@0x3fe00000, L2@0, L3@0, then L1@1GiB, L2@1GiB.
  EXPECT_EQ(frames[4].level, 1);
  EXPECT_EQ(frames[4].covers, 0x40000000u);
  EXPECT_EQ(frames[5].level, 2);
  EXPECT_EQ(frames[5].covers, 0x40000000u);
}

// MOD_START_PFN and INIT_P2M say the kernel can also do without an initrd and a p2m list in
// the region; ours always puts them there (dom0_layout.h), so the layout is that of a kernel
// without the notes, and an INIT_P2M address is never used as a place to write.
TEST(BootDom0Layout, ModStartPfnAndInitP2mKeepTheClassicLayout) {
  Dom0Layout classic;
  ASSERT_EQ(compute_dom0_layout(linux_kernel(), 8 * MiB, 16384, classic), Dom0LayoutError::none);
  XenKernelInfo kernel = linux_kernel();
  kernel.unmapped_initrd = true;
  kernel.has_init_p2m = true;
  kernel.init_p2m_base = 0x8000000000ull;  // Debian's Linux 6.1
  Dom0Layout layout;
  ASSERT_EQ(compute_dom0_layout(kernel, 8 * MiB, 16384, layout), Dom0LayoutError::none);
  EXPECT_EQ(layout.initrd, (VirtualRange{0xffffffff81a00000ull, 0xffffffff82200000ull}));
  EXPECT_EQ(layout.initrd, classic.initrd);
  EXPECT_EQ(layout.p2m, classic.p2m);
  EXPECT_EQ(layout.p2m, (VirtualRange{0xffffffff82200000ull, 0xffffffff82200000ull + 16384 * 8}));
  EXPECT_EQ(layout.bootstrap, classic.bootstrap);
  EXPECT_LE(layout.bootstrap.start, layout.p2m.start);
  EXPECT_LE(layout.p2m.end, layout.bootstrap.end) << "the p2m list is written inside the region";
}

TEST(BootDom0Layout, FailsWhenDomainTooSmall) {
  Dom0Layout layout;
  EXPECT_EQ(compute_dom0_layout(linux_kernel(), 0, 8191, layout), Dom0LayoutError::too_small_for_kernel);
  EXPECT_EQ(compute_dom0_layout(linux_kernel(), 0, 8192, layout), Dom0LayoutError::none);
  // The initrd's own pages count against the domain too, and the reason says so.
  EXPECT_EQ(compute_dom0_layout(linux_kernel(), 4 * MiB, 8192, layout), Dom0LayoutError::too_small_for_initrd);
  EXPECT_EQ(dom0_pages_needed(linux_kernel(), 4 * MiB, 8192), 8192u + 1024u);
  EXPECT_EQ(compute_dom0_layout(linux_kernel(), 4 * MiB, 8192 + 1024, layout), Dom0LayoutError::none);
  EXPECT_EQ(dom0_pages_needed(linux_kernel(), 0, 8192), 8192u);
}

// A 100 MiB initrd: the region grows past it (and its page tables with it), the allocation
// covers only the rest (28 MiB for this kernel: a 32 MiB chunk), and the domain needs that
// chunk plus the initrd's pages; below that the reason names the initrd.
TEST(BootDom0Layout, HundredMegabyteInitrd) {
  const uint64_t initrd = 100 * MiB;
  const uint64_t needed = 8192 + 25600;
  Dom0Layout layout;
  ASSERT_EQ(compute_dom0_layout(linux_kernel(), initrd, needed, layout), Dom0LayoutError::none);
  EXPECT_EQ(layout.initrd_pages, 25600u);
  EXPECT_EQ(layout.initrd.size(), initrd);
  EXPECT_LE(layout.initrd.end, layout.p2m.start);
  EXPECT_EQ(layout.tables.l1, layout.bootstrap.size() / (2 * MiB));
  EXPECT_EQ(layout.allocation_order, 13u);
  EXPECT_EQ(dom0_pages_needed(linux_kernel(), initrd, needed), needed);
  EXPECT_EQ(compute_dom0_layout(linux_kernel(), initrd, needed - 1, layout), Dom0LayoutError::too_small_for_initrd);
  EXPECT_EQ(compute_dom0_layout(linux_kernel(), initrd, 16384, layout), Dom0LayoutError::too_small_for_initrd);
}

TEST(BootDom0Layout, RefusesAddressesOutsideTheGuestHalves) {
  XenKernelInfo kernel;
  kernel.virt_base = 0x00007ffffff00000ull;  // crosses into the non-canonical hole
  kernel.virt_kstart = kernel.virt_base;
  kernel.virt_kend = kernel.virt_base + 0x80000;
  kernel.entry = kernel.virt_kstart;
  Dom0Layout layout;
  EXPECT_EQ(compute_dom0_layout(kernel, 0, 16384, layout), Dom0LayoutError::not_canonical);
  kernel.virt_base = kernel.virt_kstart = 0x0000800000000000ull;  // non-canonical
  kernel.virt_kend = kernel.virt_base + 0x80000;
  EXPECT_EQ(compute_dom0_layout(kernel, 0, 16384, layout), Dom0LayoutError::not_canonical);
  kernel.virt_base = kernel.virt_kstart = 0xffff7fffff000000ull;  // up to the hypervisor slots
  kernel.virt_kend = kernel.virt_base + 0x80000;
  EXPECT_EQ(compute_dom0_layout(kernel, 0, 16384, layout), Dom0LayoutError::not_canonical);
  kernel.virt_base = kernel.virt_kstart = 0x0000000000400000ull;  // low addresses are the guest's
  kernel.virt_kend = kernel.virt_base + 0x80000;
  EXPECT_EQ(compute_dom0_layout(kernel, 0, 16384, layout), Dom0LayoutError::none);
  kernel.virt_base = kernel.virt_kstart = 0xffff880000000000ull;  // just above the hypervisor's
  kernel.virt_kend = kernel.virt_base + 0x80000;
  EXPECT_EQ(compute_dom0_layout(kernel, 0, 16384, layout), Dom0LayoutError::none);

  EXPECT_TRUE(in_guest_address_space(0, uint64_t(1) << 47));
  EXPECT_FALSE(in_guest_address_space(0, (uint64_t(1) << 47) + 1));
  EXPECT_FALSE(in_guest_address_space(0xffff87fffffff000ull, 0xffff880000001000ull));
  EXPECT_TRUE(in_guest_address_space(0xffffffff80000000ull, 0));
  EXPECT_FALSE(in_guest_address_space(5, 4));
}

// An image can make the region enormous (a segment with a huge p_memsz): the layout is still
// computed at once, and no domain is big enough for it.
TEST(BootDom0Layout, EnormousRegionIsComputedQuicklyAndRefused) {
  XenKernelInfo kernel;
  kernel.virt_base = kernel.virt_kstart = 0x1000;
  kernel.virt_kend = uint64_t(1) << 46;
  kernel.entry = kernel.virt_kstart;
  Dom0Layout layout;
  EXPECT_EQ(compute_dom0_layout(kernel, 0, 65536, layout), Dom0LayoutError::too_small_for_kernel);
  EXPECT_GT(dom0_pages_needed(kernel, 0, 65536), uint64_t(1) << 33);
}

TEST(BootDom0Layout, RefusesHypervisorAreaAndWrap) {
  XenKernelInfo kernel;
  kernel.virt_base = 0xffff800000000000ull;
  kernel.virt_kstart = kernel.virt_base + 0x100000;
  kernel.virt_kend = kernel.virt_kstart + 0x100000;
  Dom0Layout layout;
  EXPECT_EQ(compute_dom0_layout(kernel, 0, 16384, layout), Dom0LayoutError::overlaps_hypervisor);

  kernel.virt_base = 0xfffffffffff00000ull;
  kernel.virt_kstart = kernel.virt_base;
  kernel.virt_kend = kernel.virt_base + 0x80000;
  EXPECT_EQ(compute_dom0_layout(kernel, 0, 16384, layout), Dom0LayoutError::address_overflow);
  EXPECT_EQ(compute_dom0_layout(linux_kernel(), 0, ~0ull / 4, layout), Dom0LayoutError::address_overflow);
}

TEST(BootDom0Layout, EveryErrorHasADistinctMessage) {
  std::set<std::string> messages;
  for (int e = 0; e <= int(Dom0LayoutError::too_small_for_initrd); ++e) messages.insert(describe(Dom0LayoutError(e)));
  EXPECT_EQ(messages.size(), size_t(Dom0LayoutError::too_small_for_initrd) + 1);
}
