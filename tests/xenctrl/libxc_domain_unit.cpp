// The library's domain calls (tools/libxc/xc_domain.cpp) against a fake transport: what each
// call puts in its hypercall (number, arguments, the structure in its relay buffer, the
// interface version), what it copies back, and how errors become -1 with errno, as Xen 4.17's
// libxenctrl does. Built with Debian's xenctrl.h like the library (not in tests/unit, whose
// pure build fixes an older __XEN_INTERFACE_VERSION__).
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <map>
#include <vector>

#include "tests/xenctrl/fake_transport.h"
#include "tools/libxc/dominfo.h"
#include "tools/libxc/xc_private.h"

namespace {

// A hypercall answered by the test's function of the moment.
struct FakeTransport final : pvhv::xc::testing::FakeTransport {
  std::function<int64_t(uint32_t, const uint64_t (&)[5])> on_hypercall;
  int64_t answer(uint32_t number, const uint64_t (&args)[5]) override {
    return on_hypercall ? on_hypercall(number, args) : -38;
  }
};

class LibxcDomain : public ::testing::Test {
 protected:
  void SetUp() override {
    auto owned = std::make_unique<FakeTransport>();
    fake = owned.get();
    xch = pvhv::xc::open_with_transport(std::move(owned));
  }
  void TearDown() override { xc_interface_close(xch); }
  // A domctl answer: checks the version, lets the test change the structure in dom0's buffer.
  void on_domctl(std::function<int64_t(xen_domctl_t&)> handle) {
    fake->on_hypercall = [this, handle](uint32_t number, const uint64_t(&a)[5]) -> int64_t {
      EXPECT_EQ(number, unsigned(__HYPERVISOR_domctl));
      auto& domctl = fake->object<xen_domctl_t>(a[0]);
      EXPECT_EQ(domctl.interface_version, 0x15u);
      return handle(domctl);
    };
  }
  FakeTransport* fake = nullptr;
  xc_interface* xch = nullptr;
};

TEST(LibxcDominfo, FlagsAsXen417FillsThem) {
  xen_domctl_getdomaininfo_t from{};
  from.flags = XEN_DOMINF_shutdown | XEN_DOMINF_paused | XEN_DOMINF_blocked | (SHUTDOWN_poweroff << 16);
  from.tot_pages = 8192;
  from.max_pages = 8448;
  from.shared_info_frame = 0x1234;
  from.nr_online_vcpus = 1;
  from.cpupool = 3;
  from.handle[0] = 0xab;
  xc_dominfo_t to;
  pvhv::xc::fill_dominfo(5, from, to);
  EXPECT_EQ(to.domid, 5u);
  EXPECT_EQ(to.shutdown, 1u);
  EXPECT_EQ(to.crashed, 0u);
  EXPECT_EQ(to.paused, 1u);
  EXPECT_EQ(to.blocked, 1u);
  EXPECT_EQ(to.running, 0u);
  EXPECT_EQ(to.dying, 0u);
  EXPECT_EQ(to.shutdown_reason, unsigned(SHUTDOWN_poweroff));
  EXPECT_EQ(to.nr_pages, 8192u);
  EXPECT_EQ(to.max_memkb, 8448u * 4);
  EXPECT_EQ(to.shared_info_frame, 0x1234u);
  EXPECT_EQ(to.cpupool, 3u);
  EXPECT_EQ(to.handle[0], 0xab);
}

// A crash is shown as crashed, not shut down; a domain that never shut down has 0xffff in bits
// 16..31 (Xen shifts SHUTDOWN_CODE_INVALID in whole) and reads reason 255.
TEST(LibxcDominfo, CrashAndNeverShutDown) {
  xen_domctl_getdomaininfo_t from{};
  from.flags = XEN_DOMINF_shutdown | (SHUTDOWN_crash << 16);
  xc_dominfo_t to;
  pvhv::xc::fill_dominfo(1, from, to);
  EXPECT_EQ(to.shutdown, 0u);
  EXPECT_EQ(to.crashed, 1u);
  from.flags = XEN_DOMINF_running | (0xffffu << 16);
  pvhv::xc::fill_dominfo(0, from, to);
  EXPECT_EQ(to.running, 1u);
  EXPECT_EQ(to.shutdown, 0u);
  EXPECT_EQ(to.shutdown_reason, 255u);
  from.flags = XEN_DOMINF_dying | XEN_DOMINF_hvm_guest | XEN_DOMINF_hap | XEN_DOMINF_debugged | XEN_DOMINF_xs_domain;
  pvhv::xc::fill_dominfo(0, from, to);
  EXPECT_EQ(to.dying + to.hvm + to.hap + to.debugged + to.xenstore, 5u);
}

TEST(LibxcDominfo, MemmapLimit) {
  e820entry e = pvhv::xc::memmap_limit_entry(32768 + 1024);
  EXPECT_EQ(e.addr, 0u);
  EXPECT_EQ(e.size, (32768u + 1024) << 10);
  EXPECT_EQ(e.type, unsigned(E820_RAM));
}

TEST_F(LibxcDomain, CreateCopiesTheDomainAndConfigBack) {
  on_domctl([](xen_domctl_t& d) -> int64_t {
    EXPECT_EQ(d.cmd, unsigned(XEN_DOMCTL_createdomain));
    EXPECT_EQ(d.domain, 0u);
    EXPECT_EQ(d.u.createdomain.max_vcpus, 1u);
    d.domain = 7;
    d.u.createdomain.max_evtchn_port = 1023;
    return 0;
  });
  xen_domctl_createdomain config{};
  config.max_vcpus = 1;
  config.grant_opts = XEN_DOMCTL_GRANT_version(1);
  uint32_t domid = 0;
  ASSERT_EQ(xc_domain_create(xch, &domid, &config), 0);
  EXPECT_EQ(domid, 7u);
  EXPECT_EQ(config.max_evtchn_port, 1023u);
}

TEST_F(LibxcDomain, CreateFailureLeavesDomidAndIsErrno) {
  on_domctl([](xen_domctl_t& d) -> int64_t {
    d.domain = 9;
    return -EEXIST;
  });
  xen_domctl_createdomain config{};
  uint32_t domid = 4;
  errno = 0;
  EXPECT_EQ(xc_domain_create(xch, &domid, &config), -1);
  EXPECT_EQ(errno, EEXIST);
  EXPECT_EQ(domid, 4u);
}

TEST_F(LibxcDomain, SimpleDomctls) {
  std::vector<std::pair<uint32_t, uint32_t>> seen;
  on_domctl([&](xen_domctl_t& d) -> int64_t {
    seen.emplace_back(d.cmd, d.domain);
    if (d.cmd == XEN_DOMCTL_max_mem) {
      EXPECT_EQ(d.u.max_mem.max_memkb, 33792u);
    }
    if (d.cmd == XEN_DOMCTL_max_vcpus) {
      EXPECT_EQ(d.u.max_vcpus.max, 1u);
    }
    if (d.cmd == XEN_DOMCTL_setdomainhandle) {
      EXPECT_EQ(d.u.setdomainhandle.handle[15], 0x5a);
    }
    return d.domain == 0 && d.cmd == XEN_DOMCTL_destroydomain ? -EINVAL : 0;
  });
  xen_domain_handle_t handle{};
  handle[15] = 0x5a;
  EXPECT_EQ(xc_domain_pause(xch, 3), 0);
  EXPECT_EQ(xc_domain_unpause(xch, 3), 0);
  EXPECT_EQ(xc_domain_setmaxmem(xch, 3, 33792), 0);
  EXPECT_EQ(xc_domain_max_vcpus(xch, 3, 1), 0);
  EXPECT_EQ(xc_domain_sethandle(xch, 3, handle), 0);
  EXPECT_EQ(xc_domain_destroy(xch, 3), 0);
  errno = 0;
  EXPECT_EQ(xc_domain_destroy(xch, 0), -1);
  EXPECT_EQ(errno, EINVAL);
  std::vector<std::pair<uint32_t, uint32_t>> expected = {{XEN_DOMCTL_pausedomain, 3},     {XEN_DOMCTL_unpausedomain, 3},
                                                         {XEN_DOMCTL_max_mem, 3},         {XEN_DOMCTL_max_vcpus, 3},
                                                         {XEN_DOMCTL_setdomainhandle, 3}, {XEN_DOMCTL_destroydomain, 3},
                                                         {XEN_DOMCTL_destroydomain, 0}};
  EXPECT_EQ(seen, expected);
  EXPECT_LE(fake->buffers.size(), 4u);  // only the cached one-page buffers stay
}

// xc_domain_getinfo asks domain by domain, each time from one past the last answer (the
// hypervisor answers the first domain with an id >= the one asked), and stops at the first error.
TEST_F(LibxcDomain, GetinfoWalksDomains) {
  std::vector<uint32_t> asked;
  on_domctl([&](xen_domctl_t& d) -> int64_t {
    EXPECT_EQ(d.cmd, unsigned(XEN_DOMCTL_getdomaininfo));
    asked.push_back(d.domain);
    if (d.domain > 3) return -ESRCH;
    d.domain = d.domain == 0 ? 0 : 3;
    d.u.getdomaininfo.tot_pages = 100 + d.domain;
    return 0;
  });
  xc_dominfo_t info[4];
  EXPECT_EQ(xc_domain_getinfo(xch, 0, 4, info), 2);
  EXPECT_EQ(info[0].domid, 0u);
  EXPECT_EQ(info[1].domid, 3u);
  EXPECT_EQ(info[1].nr_pages, 103u);
  EXPECT_EQ(info[2].domid, 0u);  // cleared
  EXPECT_EQ(asked, (std::vector<uint32_t>{0, 1, 4}));
  errno = 0;
  EXPECT_EQ(xc_domain_getinfo(xch, 9, 1, info), -1);
  EXPECT_EQ(errno, ESRCH);
}

TEST_F(LibxcDomain, ShutdownIsRemoteShutdown) {
  fake->on_hypercall = [this](uint32_t number, const uint64_t(&a)[5]) -> int64_t {
    EXPECT_EQ(number, unsigned(__HYPERVISOR_sched_op));
    EXPECT_EQ(a[0], unsigned(SCHEDOP_remote_shutdown));
    auto& arg = fake->object<sched_remote_shutdown_t>(a[1]);
    EXPECT_EQ(arg.domain_id, 2u);
    EXPECT_EQ(arg.reason, unsigned(SHUTDOWN_reboot));
    return -ESRCH;
  };
  errno = 0;
  EXPECT_EQ(xc_domain_shutdown(xch, 2, SHUTDOWN_reboot), -1);
  EXPECT_EQ(errno, ESRCH);
}

// populate_physmap: the reservation names the domain and points at the extent list, which
// comes back with the machine frames; fewer extents than asked is EBUSY for _exact.
TEST_F(LibxcDomain, PopulatePhysmap) {
  long done = 3;
  fake->on_hypercall = [&](uint32_t number, const uint64_t(&a)[5]) -> int64_t {
    EXPECT_EQ(number, unsigned(__HYPERVISOR_memory_op));
    EXPECT_EQ(a[0], unsigned(XENMEM_populate_physmap));
    auto& r = fake->object<xen_memory_reservation>(a[1]);
    EXPECT_EQ(r.domid, 6u);
    EXPECT_EQ(r.nr_extents, 3u);
    EXPECT_EQ(r.extent_order, 0u);
    uint64_t list = reinterpret_cast<uint64_t>(r.extent_start.p);
    for (unsigned i = 0; i < 3; ++i) {
      auto& pfn = fake->object<xen_pfn_t>(list + i * 8);
      EXPECT_EQ(pfn, 10u + i);
      pfn = 0x5000 + i;
    }
    return done;
  };
  xen_pfn_t extents[3] = {10, 11, 12};
  ASSERT_EQ(xc_domain_populate_physmap_exact(xch, 6, 3, 0, 0, extents), 0);
  EXPECT_EQ(extents[2], 0x5002u);
  done = 2;
  xen_pfn_t again[3] = {10, 11, 12};
  errno = 0;
  EXPECT_EQ(xc_domain_populate_physmap_exact(xch, 6, 3, 0, 0, again), -1);
  EXPECT_EQ(errno, EBUSY);
  xen_pfn_t third[3] = {10, 11, 12};
  EXPECT_EQ(xc_domain_populate_physmap(xch, 6, 3, 0, 0, third), 2);
  EXPECT_EQ(third[1], 0x5001u);  // copied back whatever the count
  done = -ENOMEM;
  xen_pfn_t fourth[3] = {10, 11, 12};
  errno = 0;
  EXPECT_EQ(xc_domain_populate_physmap_exact(xch, 6, 3, 0, 0, fourth), -1);
  EXPECT_EQ(errno, ENOMEM);
}

TEST_F(LibxcDomain, MemmapLimitSetsOneRamRange) {
  fake->on_hypercall = [this](uint32_t number, const uint64_t(&a)[5]) -> int64_t {
    EXPECT_EQ(number, unsigned(__HYPERVISOR_memory_op));
    EXPECT_EQ(a[0], unsigned(XENMEM_set_memory_map));
    auto& map = fake->object<xen_foreign_memory_map>(a[1]);
    EXPECT_EQ(map.domid, 4u);
    EXPECT_EQ(map.map.nr_entries, 1u);
    auto& e = fake->object<e820entry>(reinterpret_cast<uint64_t>(map.map.buffer.p));
    EXPECT_EQ(e.size, 32u << 20);
    return 0;
  };
  EXPECT_EQ(xc_domain_set_memmap_limit(xch, 4, 32768), 0);
}

TEST_F(LibxcDomain, VcpuContextThroughItsBuffer) {
  on_domctl([this](xen_domctl_t& d) -> int64_t {
    auto& ctx = fake->object<vcpu_guest_context_any_t>(reinterpret_cast<uint64_t>(d.u.vcpucontext.ctxt.p));
    EXPECT_EQ(d.u.vcpucontext.vcpu, 0u);
    if (d.cmd == XEN_DOMCTL_setvcpucontext) {
      EXPECT_EQ(ctx.x64.user_regs.rip, 0xffffffff80000000ull);
      return 0;
    }
    EXPECT_EQ(d.cmd, unsigned(XEN_DOMCTL_getvcpucontext));
    ctx.x64.user_regs.rsp = 0x1234;
    return -ENODATA;
  });
  vcpu_guest_context_any_t ctx{};
  ctx.x64.user_regs.rip = 0xffffffff80000000ull;
  EXPECT_EQ(xc_vcpu_setcontext(xch, 2, 0, &ctx), 0);
  errno = 0;
  EXPECT_EQ(xc_vcpu_getcontext(xch, 2, 0, &ctx), -1);
  EXPECT_EQ(errno, ENODATA);
}

TEST_F(LibxcDomain, VcpuGetinfo) {
  on_domctl([](xen_domctl_t& d) -> int64_t {
    EXPECT_EQ(d.cmd, unsigned(XEN_DOMCTL_getvcpuinfo));
    d.u.getvcpuinfo.online = 1;
    d.u.getvcpuinfo.cpu_time = 777;
    return 0;
  });
  xc_vcpuinfo_t info{};
  EXPECT_EQ(xc_vcpu_getinfo(xch, 1, 0, &info), 0);
  EXPECT_EQ(info.online, 1u);
  EXPECT_EQ(info.cpu_time, 777u);
}

TEST_F(LibxcDomain, AllocUnboundReturnsThePort) {
  fake->on_hypercall = [this](uint32_t number, const uint64_t(&a)[5]) -> int64_t {
    EXPECT_EQ(number, unsigned(__HYPERVISOR_event_channel_op));
    EXPECT_EQ(a[0], unsigned(EVTCHNOP_alloc_unbound));
    auto& arg = fake->object<evtchn_alloc_unbound_t>(a[1]);
    if (arg.dom == 0xffff) return -ESRCH;
    EXPECT_EQ(arg.dom, 5u);
    EXPECT_EQ(arg.remote_dom, 0u);
    arg.port = 3;
    return 0;
  };
  EXPECT_EQ(xc_evtchn_alloc_unbound(xch, 5, 0), 3);
  errno = 0;
  EXPECT_EQ(xc_evtchn_alloc_unbound(xch, 0xffff, 0), -1);
  EXPECT_EQ(errno, ESRCH);
}

TEST_F(LibxcDomain, MmuextPinNamesTheDomain) {
  fake->on_hypercall = [this](uint32_t number, const uint64_t(&a)[5]) -> int64_t {
    EXPECT_EQ(number, unsigned(__HYPERVISOR_mmuext_op));
    EXPECT_EQ(a[1], 1u);
    EXPECT_EQ(a[2], 0u);
    EXPECT_EQ(a[3], 8u);
    auto& op = fake->object<mmuext_op>(a[0]);
    EXPECT_EQ(op.cmd, unsigned(MMUEXT_PIN_L4_TABLE));
    EXPECT_EQ(op.arg1.mfn, 0x4321u);
    return -EINVAL;
  };
  mmuext_op op{};
  op.cmd = MMUEXT_PIN_L4_TABLE;
  op.arg1.mfn = 0x4321;
  errno = 0;
  EXPECT_EQ(xc_mmuext_op(xch, &op, 1, 8), -1);
  EXPECT_EQ(errno, EINVAL);
}

// Where Xen maps a foreign page and copies into it, we write it through the relay.
TEST_F(LibxcDomain, CopyAndClearDomainPagesWriteFrames) {
  std::vector<char> page(4096, 'x');
  EXPECT_EQ(xc_copy_to_domain_page(xch, 3, 0x777, page.data()), 0);
  EXPECT_EQ(fake->written_frames[0x777][4095], 'x');
  EXPECT_EQ(xc_clear_domain_pages(xch, 3, 0x800, 2), 0);
  EXPECT_EQ(fake->written_frames.count(0x801), 1u);
  EXPECT_EQ(fake->written_frames[0x801][0], 0);
  EXPECT_TRUE(fake->numbers.empty());
}

}  // namespace
