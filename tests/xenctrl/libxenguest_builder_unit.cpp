// The PV builder's sequence (tools/libxenguest/pv_builder.cpp) against a fake hypervisor behind
// a fake transport: which calls it makes in which order, what it writes into which frames
// (kernel, start_info, page tables, shared info), what it pins and the context it sets; and that
// a failing call stops it with that errno.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>

#include <cerrno>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "common/elf/xen_elf_notes.h"
#include "common/xen/pvhv_domctl.h"
#include "tests/unit/boot_elf_builder.h"
#include "tests/xenctrl/fake_transport.h"
#include "tools/libxc/xc_private.h"
#include "tools/libxenguest/include/pvhv_xenguest.h"
#include "tools/libxenguest/pv_layout.h"

namespace {

using namespace boot_test;
constexpr uint32_t kDomid = 3;
constexpr uint64_t kMfnBase = 0x100000;  // the fake hypervisor's frame for pfn p is kMfnBase + p
constexpr uint64_t kSharedInfoMfn = 0x9999;

struct FakeHypervisor final : pvhv::xc::testing::FakeTransport {
  std::vector<std::string> calls;
  uint64_t hypercall_gmfn = 0, pinned_mfn = 0;
  uint32_t pinned_for = 0, next_port = 1;
  vcpu_guest_context_t context{};
  int fail_populate = 0;         // a negative errno for populate_physmap
  int64_t pvhv_note_answer = 0;  // what pvhv's ptwr-mode domctl answers (Xen 4.17: -ENOSYS)

  int64_t domctl(xen_domctl_t& d) {
    switch (d.cmd) {
      case XEN_DOMCTL_set_address_size:
        calls.push_back("set_address_size " + std::to_string(d.u.address_size.size));
        return 0;
      case XEN_DOMCTL_getdomaininfo:
        calls.push_back("getdomaininfo");
        d.u.getdomaininfo.shared_info_frame = kSharedInfoMfn;
        return 0;
      case XEN_DOMCTL_hypercall_init:
        calls.push_back("hypercall_init");
        hypercall_gmfn = d.u.hypercall_init.gmfn;
        return 0;
      case pvhv::xen_abi::kDomctlPtwrMode: {
        pvhv::xen_abi::DomctlPtwrMode body;
        std::memcpy(&body, d.u.pad, sizeof(body));
        calls.push_back("ptwr_mode op " + std::to_string(body.op) + " mode " + std::to_string(body.mode));
        return pvhv_note_answer;
      }
      case XEN_DOMCTL_setvcpucontext:
        calls.push_back("setvcpucontext");
        context = object<vcpu_guest_context_t>(reinterpret_cast<uint64_t>(d.u.vcpucontext.ctxt.p));
        return 0;
    }
    return -EOPNOTSUPP;
  }

  int64_t answer(uint32_t number, const uint64_t (&a)[5]) override {
    if (number == __HYPERVISOR_xen_version) {
      // What Xen 4.17 answers a PV dom0 (common/kernel.c): no writable_page_tables, which it
      // reports to translated guests only, though Linux's notes require it.
      object<xen_feature_info_t>(a[1]).submap = (1u << XENFEAT_memory_op_vnode_supported) |
                                                (1u << XENFEAT_mmu_pt_update_preserve_ad) |
                                                (1u << XENFEAT_highmem_assist) | (1u << XENFEAT_gnttab_map_avail_bits) |
                                                (1u << XENFEAT_direct_mapped) | (1u << XENFEAT_dom0);
      return 0;
    }
    if (number == __HYPERVISOR_domctl) return domctl(object<xen_domctl_t>(a[0]));
    if (number == __HYPERVISOR_memory_op && a[0] == XENMEM_populate_physmap) {
      auto& r = object<xen_memory_reservation>(a[1]);
      calls.push_back("populate order " + std::to_string(r.extent_order));
      if (fail_populate) return fail_populate;
      auto* list = reinterpret_cast<xen_pfn_t*>(
          at(reinterpret_cast<uint64_t>(r.extent_start.p), r.nr_extents * sizeof(xen_pfn_t)));
      for (uint64_t i = 0; i < r.nr_extents; ++i) list[i] += kMfnBase;
      return int64_t(r.nr_extents);
    }
    if (number == __HYPERVISOR_event_channel_op && a[0] == EVTCHNOP_alloc_unbound) {
      calls.push_back("alloc_unbound");
      object<evtchn_alloc_unbound_t>(a[1]).port = next_port++;
      return 0;
    }
    if (number == __HYPERVISOR_mmuext_op) {
      auto& op = object<mmuext_op>(a[0]);
      calls.push_back("mmuext " + std::to_string(op.cmd));
      pinned_mfn = op.arg1.mfn;
      pinned_for = uint32_t(a[3]);
      return 0;
    }
    return -ENOSYS;
  }

  int foreign_write(uint32_t domid, uint64_t frame, uint32_t offset, const void* data, size_t length) override {
    EXPECT_EQ(domid, kDomid);
    return FakeTransport::foreign_write(domid, frame, offset, data, length);
  }
  int evtchn_bind_interdomain(uint32_t, uint32_t, uint32_t&) override { return errno = ENOSYS, -1; }
};

class LibxenguestBuilder : public ::testing::Test {
 protected:
  void SetUp() override {
    auto owned = std::make_unique<FakeHypervisor>();
    hv = owned.get();
    xch = pvhv::xc::open_with_transport(std::move(owned));
    kernel = linux_like_kernel(linux_notes(linux_kstart + 0x1000, linux_kstart + 0x2000), 0x20000).build();
  }
  void TearDown() override { xc_interface_close(xch); }
  int build(const std::vector<uint8_t>& image, uint64_t memory_kb = 32768) {
    pvhv_pv_image in{image.data(), image.size(), ramdisk.data(), ramdisk.size(), "init=/forktest", memory_kb, 0, 0};
    return pvhv_build_pv_domain(xch, kDomid, &in, &built);
  }
  FakeHypervisor* hv = nullptr;
  xc_interface* xch = nullptr;
  std::vector<uint8_t> kernel;
  std::vector<uint8_t> ramdisk = std::vector<uint8_t>(5000, 0x5a);
  pvhv_pv_built built{};
};

}  // namespace

// libxl's and libxenguest's order: address size, memory (sixteen 2 MiB extents for 32 MiB in
// one call), ports, getdomaininfo for the shared info frame, hypercall page, the L4 pinned,
// vCPU 0's context last.
TEST_F(LibxenguestBuilder, CallsInXensOrder) {
  ASSERT_EQ(build(kernel), 0) << built.message;
  std::vector<std::string> expected = {"set_address_size 64", "populate order 9", "alloc_unbound", "alloc_unbound",
                                       "getdomaininfo",       "hypercall_init",   "mmuext 3",      "setvcpucontext"};
  EXPECT_EQ(hv->calls, expected);
  EXPECT_EQ(built.console_port, 1u);
  EXPECT_EQ(built.store_port, 2u);
  EXPECT_EQ(built.total_pages, 8192u);
}

TEST_F(LibxenguestBuilder, FramesAsThePlanSays) {
  ASSERT_EQ(build(kernel), 0) << built.message;
  // The kernel at pfn 4096 (16 MiB of padding below it): its first bytes, the rest zero and unwritten.
  auto kernel_frame = hv->written_frames.find(kMfnBase + 4096);
  ASSERT_NE(kernel_frame, hv->written_frames.end());
  EXPECT_EQ(kernel_frame->second[0], 0x90);
  EXPECT_EQ(kernel_frame->second[64], 0);
  EXPECT_EQ(hv->written_frames.count(kMfnBase + 4097), 0u);  // all zero: skipped
  EXPECT_EQ(hv->written_frames.count(kMfnBase + 0), 0u);     // padding
  // The ramdisk right after the kernel's 32 pages, 5000 bytes over two frames.
  EXPECT_EQ(hv->written_frames.at(kMfnBase + 4096 + 32)[0], 0x5a);
  EXPECT_EQ(hv->written_frames.at(kMfnBase + 4096 + 33)[5000 - 4096 - 1], 0x5a);
  EXPECT_EQ(hv->written_frames.at(kMfnBase + 4096 + 33)[5000 - 4096], 0);
  // start_info where the layout puts it, read as the guest will.
  const auto& si =
      *reinterpret_cast<const start_info_t*>(hv->written_frames.at(kMfnBase + built.start_info_pfn).data());
  EXPECT_STREQ(si.magic, "xen-3.0-x86_64");
  EXPECT_EQ(si.shared_info, kSharedInfoMfn << 12);
  EXPECT_EQ(si.console.domU.mfn, kMfnBase + built.console_pfn);
  EXPECT_EQ(si.console.domU.evtchn, 1u);
  EXPECT_EQ(si.mod_len, 5000u);
  EXPECT_STREQ(reinterpret_cast<const char*>(si.cmd_line), "init=/forktest");
  // The p2m list: pfn p -> kMfnBase + p.
  const auto* p2m = reinterpret_cast<const uint64_t*>(
      hv->written_frames.at(kMfnBase + (built.p2m_va - built.virt_base) / 4096).data());
  EXPECT_EQ(p2m[0], kMfnBase);
  EXPECT_EQ(p2m[511], kMfnBase + 511);
  // The L4: slot 511 to the L3, which is the next frame.
  const auto* l4 = reinterpret_cast<const uint64_t*>(hv->written_frames.at(built.l4_mfn).data());
  EXPECT_EQ(l4[511], ((built.l4_mfn + 1) << 12) | 0x67);
  EXPECT_EQ(hv->pinned_mfn, built.l4_mfn);
  EXPECT_EQ(hv->pinned_for, kDomid);
  // The shared info page: every vCPU's upcalls masked.
  const auto& shared = *reinterpret_cast<const shared_info_t*>(hv->written_frames.at(kSharedInfoMfn).data());
  EXPECT_EQ(shared.vcpu_info[0].evtchn_upcall_mask, 1);
  EXPECT_EQ(shared.vcpu_info[31].evtchn_upcall_mask, 1);
  // The hypercall page's frame, and the context.
  EXPECT_EQ(hv->hypercall_gmfn, kMfnBase + 4096 + 2);
  EXPECT_EQ(hv->context.user_regs.rip, linux_kstart + 0x1000);
  EXPECT_EQ(hv->context.user_regs.rsi, built.start_info_va);
  EXPECT_EQ(hv->context.ctrlreg[3], built.l4_mfn << 12);
  for (const auto& [frame, bytes] : hv->written_frames) {
    bool all_zero = true;
    for (uint8_t b : bytes) all_zero = all_zero && b == 0;
    // Only the xenstore and console pages are cleared on purpose, as libxenguest clears them.
    if (all_zero) {
      EXPECT_TRUE(frame == kMfnBase + built.xenstore_pfn || frame == kMfnBase + built.console_pfn) << frame;
    }
  }
}

TEST_F(LibxenguestBuilder, BadKernelsStopBeforeAnyMemory) {
  std::vector<uint8_t> truncated(kernel.begin(), kernel.begin() + 100);
  errno = 0;
  EXPECT_EQ(build(truncated), -1);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_EQ(built.xc_error, XC_INVALID_KERNEL);
  errno = 0;
  EXPECT_EQ(build(kernel, 8192), -1);  // 8 MiB: the kernel sits at 16 MiB
  EXPECT_EQ(errno, ENOMEM);
  EXPECT_EQ(built.xc_error, XC_OUT_OF_MEMORY);
  for (const std::string& call : hv->calls) EXPECT_EQ(call.find("populate"), std::string::npos) << call;
  EXPECT_TRUE(hv->written_frames.empty());
}

TEST_F(LibxenguestBuilder, AFailedPopulateIsItsErrno) {
  hv->fail_populate = -ENOMEM;
  errno = 0;
  EXPECT_EQ(build(kernel), -1);
  EXPECT_EQ(errno, ENOMEM);
  EXPECT_NE(std::string(built.message).find("populate_physmap"), std::string::npos) << built.message;
  EXPECT_TRUE(hv->written_frames.empty());
}

// Debian's own bzImage (xz payload, Linux 6.1 with INIT_P2M and no hypercall page): unpacked,
// laid out and written as its vmlinux says; a damaged payload stops before any memory.
TEST_F(LibxenguestBuilder, DebiansBzImageIsUnpackedAndBuilt) {
  std::ifstream in(PVHV_DEBIAN_VMLINUZ, std::ios::binary);
  std::vector<uint8_t> bzimage{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  ASSERT_GT(bzimage.size(), 1u << 20) << "missing " << PVHV_DEBIAN_VMLINUZ;
  ASSERT_EQ(build(bzimage, 131072), 0) << built.message;
  EXPECT_EQ(built.virt_base, 0xffffffff80000000ull);
  EXPECT_EQ(hv->context.user_regs.rip, built.entry);
  EXPECT_GE(built.entry, 0xffffffff81000000ull);
  EXPECT_EQ(std::count(hv->calls.begin(), hv->calls.end(), "hypercall_init"), 0);  // no HYPERCALL_PAGE note
  EXPECT_GT(built.pages_written, 1000u);  // the kernel's text and data, not its .bss

  std::vector<uint8_t> damaged = bzimage;
  for (size_t i = 0; i < 64; ++i) damaged[damaged.size() / 2 + i] ^= 0x5a;
  hv->calls.clear();
  hv->written_frames.clear();
  errno = 0;
  EXPECT_EQ(build(damaged, 131072), -1);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_EQ(built.xc_error, XC_INVALID_KERNEL);
  EXPECT_NE(std::string(built.message).find("bzImage"), std::string::npos) << built.message;
  EXPECT_TRUE(hv->written_frames.empty());
}

// Our PVHV note (the kernel reads unhooked L2 entries): passed on to the hypervisor by pvhv's
// ptwr-mode domctl right after the address size, before any memory; a kernel without it
// (Linux, above) sends nothing.
namespace {
std::vector<uint8_t> kernel_with_pvhv_note() {
  return linux_like_kernel(concat({linux_notes(linux_kstart + 0x1000, linux_kstart + 0x2000),
                                   note(boot::kPvhvNoteName, boot::kPvhvNoteReadsUnhookedEntries, Bytes{})}),
                           0x20000)
      .build();
}
const std::string kNoteCall = "ptwr_mode op " + std::to_string(pvhv::xen_abi::kPtwrReadsUnhookedSet) + " mode 1";
}  // namespace

TEST_F(LibxenguestBuilder, PassesThePvhvNoteBeforeTheMemory) {
  ASSERT_EQ(build(kernel_with_pvhv_note()), 0) << built.message;
  ASSERT_GE(hv->calls.size(), 3u);
  EXPECT_EQ(hv->calls[0], "set_address_size 64");
  EXPECT_EQ(hv->calls[1], kNoteCall);
  EXPECT_EQ(hv->calls[2], "populate order 9");
}

TEST_F(LibxenguestBuilder, AKernelWithoutTheNoteSendsNothing) {
  ASSERT_EQ(build(kernel), 0) << built.message;
  EXPECT_EQ(std::count_if(hv->calls.begin(), hv->calls.end(),
                          [](const std::string& c) { return c.rfind("ptwr_mode", 0) == 0; }),
            0);
}

// Xen 4.17 has no such domctl and never unhooks: the build goes on as without the note.
TEST_F(LibxenguestBuilder, XensEnosysForTheNoteIsHarmless) {
  hv->pvhv_note_answer = -ENOSYS;
  ASSERT_EQ(build(kernel_with_pvhv_note()), 0) << built.message;
  EXPECT_EQ(hv->calls.back(), "setvcpucontext");
}

TEST_F(LibxenguestBuilder, AnyOtherRefusalOfTheNoteStopsTheBuild) {
  for (int64_t answer : {-EPERM, -EEXIST, -EINVAL}) {
    hv->calls.clear();
    hv->pvhv_note_answer = answer;
    errno = 0;
    EXPECT_EQ(build(kernel_with_pvhv_note()), -1) << answer;
    EXPECT_EQ(errno, int(-answer));
    EXPECT_NE(std::string(built.message).find("PVHV note"), std::string::npos) << built.message;
    EXPECT_EQ(hv->calls.back(), kNoteCall) << "nothing after the refusal";
  }
}
