// start_info, vCPU 0's context and the shared info page as the host builder writes them
// (tools/libxenguest/pv_start), field by field as Xen 4.17's libxenguest fills them.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "tools/libxenguest/pv_start.h"

using namespace xenguest;

namespace {

constexpr uint64_t kBase = 0xffffffff80000000ull;

struct Fixture {
  PvLayout layout;
  std::vector<uint64_t> p2m;
  Fixture(uint64_t ramdisk = 0x2001) {
    EXPECT_EQ(lay_out({kBase, kBase, kBase + 0x15e000}, ramdisk, 8192, layout), LayoutError::none);
    p2m.resize(8192);
    for (uint64_t i = 0; i < p2m.size(); ++i) p2m[i] = 0x80000 + 3 * i;  // any distinct frames
  }
};

}  // namespace

TEST(LibxenguestPvStart, StartInfoAsLibxenguestFillsIt) {
  Fixture f;
  start_info_t si;
  std::memset(&si, 0xcc, sizeof(si));
  fill_start_info(f.layout, {f.p2m.data(), 0x1234, 2, 1, "init=/forktest quiet"}, si);
  EXPECT_STREQ(si.magic, "xen-3.0-x86_64");
  EXPECT_EQ(si.nr_pages, 8192u);
  EXPECT_EQ(si.shared_info, 0x1234000u);
  EXPECT_EQ(si.flags, 0u);
  EXPECT_EQ(si.store_mfn, f.p2m[370]);
  EXPECT_EQ(si.store_evtchn, 2u);
  EXPECT_EQ(si.console.domU.mfn, f.p2m[371]);
  EXPECT_EQ(si.console.domU.evtchn, 1u);
  EXPECT_EQ(si.pt_base, kBase + 372 * 4096);
  EXPECT_EQ(si.nr_pt_frames, 5u);
  EXPECT_EQ(si.mfn_list, kBase + 353 * 4096);
  EXPECT_EQ(si.mod_start, kBase + 350 * 4096);
  EXPECT_EQ(si.mod_len, 0x2001u);
  EXPECT_EQ(si.first_p2m_pfn, 0u);
  EXPECT_EQ(si.nr_p2m_frames, 0u);
  EXPECT_STREQ(reinterpret_cast<const char*>(si.cmd_line), "init=/forktest quiet");
}

TEST(LibxenguestPvStart, NoRamdiskNoCommandLine) {
  Fixture f(0);
  start_info_t si;
  fill_start_info(f.layout, {f.p2m.data(), 1, 0, 0, nullptr}, si);
  EXPECT_EQ(si.mod_start, 0u);
  EXPECT_EQ(si.mod_len, 0u);
  EXPECT_EQ(si.cmd_line[0], 0);
}

// A command line longer than MAX_GUEST_CMDLINE keeps its first 1023 bytes and a NUL.
TEST(LibxenguestPvStart, LongCommandLineIsTruncated) {
  Fixture f;
  std::string line(3000, 'x');
  start_info_t si;
  fill_start_info(f.layout, {f.p2m.data(), 1, 0, 0, line.c_str()}, si);
  EXPECT_EQ(std::strlen(reinterpret_cast<const char*>(si.cmd_line)), size_t(MAX_GUEST_CMDLINE - 1));
}

TEST(LibxenguestPvStart, InitialContext) {
  Fixture f;
  vcpu_guest_context_t ctx;
  std::memset(&ctx, 0xcc, sizeof(ctx));
  fill_initial_context(f.layout, f.p2m.data(), kBase + 0x40, ctx);
  EXPECT_EQ(ctx.user_regs.rip, kBase + 0x40);
  EXPECT_EQ(ctx.user_regs.rsp, kBase + 378 * 4096);  // the top of the boot stack (pfn 377)
  EXPECT_EQ(ctx.user_regs.rsi, kBase + 369 * 4096);  // start_info
  EXPECT_EQ(ctx.user_regs.rflags, 0x200u);
  EXPECT_EQ(ctx.user_regs.cs, 0xe033);
  EXPECT_EQ(ctx.user_regs.ss, 0xe02b);
  EXPECT_EQ(ctx.user_regs.ds, 0);  // FLAT_KERNEL_DS of 64-bit PV is the null selector
  EXPECT_EQ(ctx.user_regs.es, 0);
  EXPECT_EQ(ctx.kernel_ss, 0xe02bu);
  EXPECT_EQ(ctx.kernel_sp, ctx.user_regs.rsp);
  EXPECT_EQ(ctx.ctrlreg[3], f.p2m[372] << 12);
  EXPECT_EQ(ctx.flags, unsigned(VGCF_in_kernel | VGCF_online));
  EXPECT_EQ(ctx.debugreg[6], 0xffff0ff0u);
  EXPECT_EQ(ctx.debugreg[7], 0x400u);
  EXPECT_EQ(ctx.user_regs.rax, 0u);
  EXPECT_EQ(ctx.event_callback_eip, 0u);
  EXPECT_EQ(ctx.gdt_ents, 0u);
}

TEST(LibxenguestPvStart, SharedInfoMasksEveryVcpu) {
  shared_info_t info;
  std::memset(&info, 0xcc, sizeof(info));
  fill_shared_info(info);
  for (const auto& vcpu : info.vcpu_info) EXPECT_EQ(vcpu.evtchn_upcall_mask, 1);
  EXPECT_EQ(info.evtchn_pending[0], 0u);
  EXPECT_EQ(info.wc_sec, 0u);
}
