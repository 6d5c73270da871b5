// What the dom0 relay forwards and what it refuses (guest/relay/server/relay_policy.h).
#define __XEN_TOOLS__ 1
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include <xen/xen.h>
#include <xen/domctl.h>
#include <xen/event_channel.h>
#include <xen/memory.h>
#include <xen/sched.h>
#include <xen/sysctl.h>
#include <xen/version.h>

#include "common/xen/pvhv_domctl.h"
#include "relay/server/relay_policy.h"

namespace {
using lib::relay::BufferTable;
using lib::relay::check_foreign_access;
using lib::relay::check_hypercall;
using lib::relay::Refusal;
constexpr uint64_t kBase = 0xffffffffb4000000ull;
constexpr uint64_t kPage = 4096;

struct Fixture : ::testing::Test {
  BufferTable table{kBase};
  std::vector<uint8_t> memory = std::vector<uint8_t>(2 * kPage);
  uint64_t buffer = 0;  // two pages
  void SetUp() override {
    ASSERT_EQ(table.place(2, buffer), BufferTable::Status::ok);
    ASSERT_EQ(table.insert(buffer, 2, memory.data()), BufferTable::Status::ok);
  }
  template <typename T>
  void put(uint64_t offset, const T& value) {
    std::memcpy(memory.data() + offset, &value, sizeof(value));
  }
  Refusal check(uint32_t number, uint64_t a0 = 0, uint64_t a1 = 0, uint64_t a2 = 0, uint64_t a3 = 0, uint64_t a4 = 0) {
    const uint64_t args[5] = {a0, a1, a2, a3, a4};
    return check_hypercall(number, args, table);
  }
  uint64_t end() const { return buffer + 2 * kPage; }
};
using RelayPolicy = Fixture;

TEST_F(RelayPolicy, HypercallsThatWouldBreakDom0AreRefused) {
  for (uint32_t number : std::initializer_list<uint32_t>{__HYPERVISOR_set_trap_table,
                                                         __HYPERVISOR_stack_switch,
                                                         __HYPERVISOR_set_callbacks,
                                                         __HYPERVISOR_fpu_taskswitch,
                                                         __HYPERVISOR_set_timer_op,
                                                         __HYPERVISOR_multicall,
                                                         __HYPERVISOR_update_va_mapping,
                                                         __HYPERVISOR_update_va_mapping_otherdomain,
                                                         __HYPERVISOR_vm_assist,
                                                         __HYPERVISOR_iret,
                                                         __HYPERVISOR_vcpu_op,
                                                         __HYPERVISOR_set_segment_base,
                                                         __HYPERVISOR_callback_op,
                                                         __HYPERVISOR_physdev_op,
                                                         __HYPERVISOR_grant_table_op,
                                                         __HYPERVISOR_platform_op,
                                                         __HYPERVISOR_kexec_op,
                                                         63u,
                                                         64u,
                                                         1000u,
                                                         0xffffffffu})
    EXPECT_EQ(check(number, buffer), Refusal::hypercall) << number;
}

TEST_F(RelayPolicy, SysctlAndDomctlNeedTheirWholeStructureInABuffer) {
  xen_domctl_t domctl{};
  domctl.cmd = XEN_DOMCTL_max_mem;
  domctl.domain = 2;
  put(100, domctl);
  EXPECT_EQ(check(__HYPERVISOR_sysctl, buffer), Refusal::none);
  EXPECT_EQ(check(__HYPERVISOR_domctl, buffer + 100), Refusal::none);
  EXPECT_EQ(check(__HYPERVISOR_sysctl, end() - sizeof(xen_sysctl_t)), Refusal::none);
  EXPECT_EQ(check(__HYPERVISOR_sysctl, end() - sizeof(xen_sysctl_t) + 1), Refusal::pointer);
  EXPECT_EQ(check(__HYPERVISOR_domctl, end() - 8), Refusal::pointer);
  EXPECT_EQ(check(__HYPERVISOR_sysctl, 0xffffffff80001000ull), Refusal::pointer);  // dom0's kernel
  EXPECT_EQ(check(__HYPERVISOR_sysctl, 0), Refusal::none);                         // the hypervisor answers -EFAULT
  EXPECT_EQ(check(__HYPERVISOR_domctl, 0), Refusal::none);
}

// A domctl on dom0 (its `domain` 0) only reads what the toolstack lists, or sets pvhv's
// page-table write mode; the rest would act on dom0's memory, vCPUs, scheduling or life.
TEST_F(RelayPolicy, DomctlsOnDom0OnlyFromTheAllowList) {
  auto domctl_on = [&](uint32_t cmd, domid_t domain, uint32_t ptwr_op = 0) {
    xen_domctl_t domctl{};
    domctl.cmd = cmd;
    domctl.interface_version = XEN_DOMCTL_INTERFACE_VERSION;
    domctl.domain = domain;
    pvhv::xen_abi::DomctlPtwrMode body{ptwr_op, 1, {0, 0}};
    std::memcpy(domctl.u.pad, &body, sizeof(body));
    put(0, domctl);
    return check(__HYPERVISOR_domctl, buffer);
  };
  for (uint32_t cmd : std::initializer_list<uint32_t>{
           XEN_DOMCTL_hypercall_init, XEN_DOMCTL_max_mem, XEN_DOMCTL_pausedomain, XEN_DOMCTL_unpausedomain,
           XEN_DOMCTL_destroydomain, XEN_DOMCTL_setvcpucontext, XEN_DOMCTL_getvcpucontext, XEN_DOMCTL_max_vcpus,
           XEN_DOMCTL_scheduler_op, XEN_DOMCTL_setdomainhandle, XEN_DOMCTL_set_address_size,
           XEN_DOMCTL_iomem_permission, XEN_DOMCTL_settimeoffset, 0u, 999u}) {
    EXPECT_EQ(domctl_on(cmd, 0), Refusal::own_domain) << cmd;
    EXPECT_EQ(domctl_on(cmd, 2), Refusal::none) << cmd;  // another domain's: the toolstack's to do
  }
  for (uint32_t cmd : std::initializer_list<uint32_t>{XEN_DOMCTL_getdomaininfo, XEN_DOMCTL_getvcpuinfo,
                                                      XEN_DOMCTL_getvcpuaffinity, XEN_DOMCTL_setvcpuaffinity,
                                                      XEN_DOMCTL_get_address_size, XEN_DOMCTL_createdomain})
    EXPECT_EQ(domctl_on(cmd, 0), Refusal::none) << cmd;
  EXPECT_EQ(domctl_on(pvhv::xen_abi::kDomctlPtwrMode, 0, pvhv::xen_abi::kPtwrModeGet), Refusal::none);
  EXPECT_EQ(domctl_on(pvhv::xen_abi::kDomctlPtwrMode, 0, pvhv::xen_abi::kPtwrModeSet), Refusal::none);
  EXPECT_EQ(domctl_on(pvhv::xen_abi::kDomctlPtwrMode, 0, pvhv::xen_abi::kPtwrReadsUnhookedSet), Refusal::own_domain);
  EXPECT_EQ(domctl_on(pvhv::xen_abi::kDomctlPtwrMode, 2, pvhv::xen_abi::kPtwrReadsUnhookedSet), Refusal::none);
  // DOMID_SELF names no domain for a domctl (looked up by id alone: -ESRCH, as Xen).
  EXPECT_EQ(domctl_on(XEN_DOMCTL_max_mem, DOMID_SELF), Refusal::none);
}

TEST_F(RelayPolicy, XenVersionSizesByCommand) {
  EXPECT_EQ(check(__HYPERVISOR_xen_version, XENVER_version, 0), Refusal::none);
  EXPECT_EQ(check(__HYPERVISOR_xen_version, XENVER_version, 0xffffffff80000000ull), Refusal::none);  // not used
  EXPECT_EQ(check(__HYPERVISOR_xen_version, XENVER_capabilities, end() - 1024), Refusal::none);
  EXPECT_EQ(check(__HYPERVISOR_xen_version, XENVER_capabilities, end() - 1023), Refusal::pointer);
  EXPECT_EQ(check(__HYPERVISOR_xen_version, XENVER_extraversion, end() - 16), Refusal::none);
  EXPECT_EQ(check(__HYPERVISOR_xen_version, XENVER_commandline, 0xffffffff80100000ull), Refusal::pointer);
  EXPECT_EQ(check(__HYPERVISOR_xen_version, 11, buffer), Refusal::sub_op);
  EXPECT_EQ(check(__HYPERVISOR_xen_version, (1ull << 32) | XENVER_capabilities, buffer), Refusal::sub_op);
  // build_id: the caller's header says how much follows it.
  put<uint32_t>(kPage, 2 * kPage);
  EXPECT_EQ(check(__HYPERVISOR_xen_version, XENVER_build_id, buffer + kPage), Refusal::pointer);
  put<uint32_t>(kPage, 100);
  EXPECT_EQ(check(__HYPERVISOR_xen_version, XENVER_build_id, buffer + kPage), Refusal::none);
}

TEST_F(RelayPolicy, ConsoleIoCountMustFit) {
  EXPECT_EQ(check(__HYPERVISOR_console_io, CONSOLEIO_write, 100, buffer), Refusal::none);
  EXPECT_EQ(check(__HYPERVISOR_console_io, CONSOLEIO_read, 2 * kPage, buffer), Refusal::none);
  EXPECT_EQ(check(__HYPERVISOR_console_io, CONSOLEIO_write, 2 * kPage + 1, buffer), Refusal::pointer);
  EXPECT_EQ(check(__HYPERVISOR_console_io, CONSOLEIO_write, 1ull << 32, buffer), Refusal::sub_op);
  EXPECT_EQ(check(__HYPERVISOR_console_io, 2, 1, buffer), Refusal::sub_op);
}

TEST_F(RelayPolicy, MemoryOpActsOnOtherDomainsOnly) {
  xen_memory_reservation_t reservation{};
  reservation.domid = DOMID_SELF;
  put(0, reservation);
  for (unsigned cmd :
       {XENMEM_increase_reservation, XENMEM_decrease_reservation, XENMEM_populate_physmap, XENMEM_claim_pages})
    EXPECT_EQ(check(__HYPERVISOR_memory_op, cmd, buffer), Refusal::own_domain) << cmd;
  reservation.domid = 0;
  put(0, reservation);
  EXPECT_EQ(check(__HYPERVISOR_memory_op, XENMEM_populate_physmap, buffer), Refusal::own_domain);
  reservation.domid = 3;
  put(0, reservation);
  EXPECT_EQ(check(__HYPERVISOR_memory_op, XENMEM_populate_physmap, buffer), Refusal::none);
  EXPECT_EQ(check(__HYPERVISOR_memory_op, XENMEM_populate_physmap | (5 << 6), buffer), Refusal::sub_op);
  EXPECT_EQ(check(__HYPERVISOR_memory_op, XENMEM_populate_physmap, end() - 8), Refusal::pointer);
  for (unsigned cmd : {XENMEM_exchange, XENMEM_add_to_physmap, XENMEM_remove_from_physmap, XENMEM_add_to_physmap_batch,
                       XENMEM_machphys_mfn_list, XENMEM_acquire_resource})
    EXPECT_EQ(check(__HYPERVISOR_memory_op, cmd, buffer), Refusal::sub_op) << cmd;
  put<domid_t>(0, 0);
  EXPECT_EQ(check(__HYPERVISOR_memory_op, XENMEM_current_reservation, buffer), Refusal::none);  // a read
  EXPECT_EQ(check(__HYPERVISOR_memory_op, XENMEM_maximum_ram_page, 0), Refusal::none);
  xen_foreign_memory_map map{};
  map.domid = DOMID_SELF;
  put(0, map);
  EXPECT_EQ(check(__HYPERVISOR_memory_op, XENMEM_set_memory_map, buffer), Refusal::own_domain);
}

TEST_F(RelayPolicy, EventChannelsOfDom0GoThroughTheRelayRequests) {
  evtchn_alloc_unbound_t alloc{};
  alloc.dom = 2;
  put(0, alloc);
  EXPECT_EQ(check(__HYPERVISOR_event_channel_op, EVTCHNOP_alloc_unbound, buffer), Refusal::none);
  alloc.dom = DOMID_SELF;
  put(0, alloc);
  EXPECT_EQ(check(__HYPERVISOR_event_channel_op, EVTCHNOP_alloc_unbound, buffer), Refusal::own_domain);
  EXPECT_EQ(check(__HYPERVISOR_event_channel_op, EVTCHNOP_status, buffer), Refusal::none);
  for (unsigned cmd : {EVTCHNOP_close, EVTCHNOP_send, EVTCHNOP_bind_virq, EVTCHNOP_bind_interdomain, EVTCHNOP_unmask,
                       EVTCHNOP_reset, EVTCHNOP_bind_vcpu})
    EXPECT_EQ(check(__HYPERVISOR_event_channel_op, cmd, buffer), Refusal::sub_op) << cmd;
}

TEST_F(RelayPolicy, SchedOpOnlyShutsDownOtherDomains) {
  sched_remote_shutdown_t remote{};
  remote.domain_id = 1;
  put(0, remote);
  EXPECT_EQ(check(__HYPERVISOR_sched_op, SCHEDOP_remote_shutdown, buffer), Refusal::none);
  remote.domain_id = 0;
  put(0, remote);
  EXPECT_EQ(check(__HYPERVISOR_sched_op, SCHEDOP_remote_shutdown, buffer), Refusal::own_domain);
  for (unsigned cmd : {SCHEDOP_yield, SCHEDOP_block, SCHEDOP_shutdown, SCHEDOP_poll, SCHEDOP_watchdog})
    EXPECT_EQ(check(__HYPERVISOR_sched_op, cmd, buffer), Refusal::sub_op) << cmd;
}

TEST_F(RelayPolicy, PageTableUpdatesOnlyForAnotherDomainsTables) {
  // foreigndom = (page-table owner + 1) << 16 | frame owner.
  EXPECT_EQ(check(__HYPERVISOR_mmu_update, buffer, 4, 0, DOMID_XEN), Refusal::own_page_tables);
  EXPECT_EQ(check(__HYPERVISOR_mmu_update, buffer, 4, 0, (1u << 16) | 1), Refusal::own_page_tables);  // dom0 + 1
  EXPECT_EQ(check(__HYPERVISOR_mmu_update, buffer, 4, 0, ((DOMID_SELF + 1u) << 16) | 2), Refusal::own_page_tables);
  EXPECT_EQ(check(__HYPERVISOR_mmu_update, buffer, 4, buffer + 64, (3u << 16) | 2), Refusal::none);  // d2's tables
  EXPECT_EQ(check(__HYPERVISOR_mmu_update, buffer, 2 * kPage / 16 + 1, 0, (3u << 16) | 2), Refusal::pointer);
  EXPECT_EQ(check(__HYPERVISOR_mmu_update, buffer, 1, 0xffffffff80000000ull, (3u << 16) | 2), Refusal::pointer);
  EXPECT_EQ(check(__HYPERVISOR_mmu_update, buffer, 0x80000001u, 0, (3u << 16) | 2), Refusal::sub_op);  // preempted
  // The frames another domain's tables map are another ordinary domain's: never dom0's (they
  // would be writable in a domU), nor the hypervisor's or the machine's I/O memory.
  EXPECT_EQ(check(__HYPERVISOR_mmu_update, buffer, 4, 0, (3u << 16) | DOMID_SELF), Refusal::own_domain);
  EXPECT_EQ(check(__HYPERVISOR_mmu_update, buffer, 4, 0, (3u << 16) | 0), Refusal::own_domain);
  EXPECT_EQ(check(__HYPERVISOR_mmu_update, buffer, 4, 0, (3u << 16) | DOMID_XEN), Refusal::special_domain);
  EXPECT_EQ(check(__HYPERVISOR_mmu_update, buffer, 4, 0, (3u << 16) | DOMID_IO), Refusal::special_domain);
  EXPECT_EQ(check(__HYPERVISOR_mmu_update, buffer, 4, 0, (3u << 16) | DOMID_INVALID), Refusal::special_domain);
  mmuext_op_t op{};
  op.cmd = MMUEXT_PIN_L4_TABLE;
  put(0, op);
  op.cmd = MMUEXT_UNPIN_TABLE;
  put(sizeof(op), op);
  EXPECT_EQ(check(__HYPERVISOR_mmuext_op, buffer, 2, 0, 2), Refusal::none);
  EXPECT_EQ(check(__HYPERVISOR_mmuext_op, buffer, 2, 0, DOMID_SELF), Refusal::own_page_tables);
  EXPECT_EQ(check(__HYPERVISOR_mmuext_op, buffer, 2, 0, 0), Refusal::own_page_tables);
  EXPECT_EQ(check(__HYPERVISOR_mmuext_op, buffer, 2, 0, DOMID_XEN), Refusal::special_domain);
  EXPECT_EQ(check(__HYPERVISOR_mmuext_op, buffer, 2, 0, DOMID_IO), Refusal::special_domain);
  op.cmd = MMUEXT_NEW_BASEPTR;
  put(sizeof(op), op);
  EXPECT_EQ(check(__HYPERVISOR_mmuext_op, buffer, 2, 0, 2), Refusal::sub_op);
}

TEST(RelayForeignPolicy, ReservedDomainsAndWritesToDom0AreRefused) {
  EXPECT_EQ(check_foreign_access(DOMID_XEN, false), Refusal::none);
  EXPECT_EQ(check_foreign_access(DOMID_XEN, true), Refusal::none);  // the hypervisor decides per frame
  EXPECT_EQ(check_foreign_access(1, true), Refusal::none);
  EXPECT_EQ(check_foreign_access(0, false), Refusal::none);
  EXPECT_EQ(check_foreign_access(0, true), Refusal::own_domain);
  EXPECT_EQ(check_foreign_access(DOMID_SELF, true), Refusal::own_domain);
  EXPECT_EQ(check_foreign_access(DOMID_IO, false), Refusal::special_domain);
  EXPECT_EQ(check_foreign_access(DOMID_COW, false), Refusal::special_domain);
  EXPECT_EQ(check_foreign_access(DOMID_INVALID, false), Refusal::special_domain);
  EXPECT_EQ(check_foreign_access(0x10000, false), Refusal::special_domain);
}
}  // namespace
