// The event-channel rules of Xen 4.17 (alloc_unbound, bind_interdomain, close, status) on two
// domains' port tables.
#include <gtest/gtest.h>
#include "domain/event_channel_table.h"

namespace evtchn {
namespace {
struct TwoDomains : ::testing::Test {
  Channel dom0_ports[16]{}, domu_ports[16]{};
  unsigned dom0_valid = first_bucket_end(16), domu_valid = first_bucket_end(16);
  Table dom0{dom0_ports, 16, 0, &dom0_valid}, domu{domu_ports, 16, 1, &domu_valid};
  static TwoDomains* current;
  void SetUp() override { current = this; }
  static Table* find(domid_t id) { return id == 0 ? &current->dom0 : id == 1 ? &current->domu : nullptr; }
  evtchn_status_t status_of(const Table& table, evtchn_port_t port) {
    evtchn_status_t out{};
    EXPECT_EQ(status(table, port, out), 0);
    return out;
  }
};
TwoDomains* TwoDomains::current = nullptr;

TEST_F(TwoDomains, PortZeroIsNeverAllocated) {
  EXPECT_EQ(alloc_unbound(domu, 0), 1);
  EXPECT_EQ(status_of(domu, 0).status, uint32_t(EVTCHNSTAT_closed));
  EXPECT_EQ(close(domu, 0, find).error, -XEN_EINVAL);
}

TEST_F(TwoDomains, UnboundThenBoundByTheNamedRemote) {
  int unbound = alloc_unbound(domu, 0);
  evtchn_status_t s = status_of(domu, evtchn_port_t(unbound));
  EXPECT_EQ(s.status, uint32_t(EVTCHNSTAT_unbound));
  EXPECT_EQ(s.u.unbound.dom, 0);
  int local = bind_interdomain(dom0, domu, evtchn_port_t(unbound));
  ASSERT_EQ(local, 1);
  s = status_of(domu, evtchn_port_t(unbound));
  EXPECT_EQ(s.status, uint32_t(EVTCHNSTAT_interdomain));
  EXPECT_EQ(s.u.interdomain.dom, 0);
  EXPECT_EQ(s.u.interdomain.port, uint32_t(local));
  s = status_of(dom0, evtchn_port_t(local));
  EXPECT_EQ(s.u.interdomain.dom, 1);
  EXPECT_EQ(s.u.interdomain.port, uint32_t(unbound));
  EXPECT_EQ(dom0.count_in_use(), 1u);
  EXPECT_EQ(domu.count_in_use(), 1u);
}

TEST_F(TwoDomains, BindingRefusesWhatIsNotUnboundForUs) {
  int for_dom0 = alloc_unbound(domu, 0);
  EXPECT_EQ(bind_interdomain(domu, domu, evtchn_port_t(for_dom0)), -XEN_EINVAL) << "waits for dom0, not domU";
  EXPECT_EQ(bind_interdomain(dom0, domu, 7), -XEN_EINVAL) << "a free port";
  EXPECT_EQ(bind_interdomain(dom0, domu, 16), -XEN_EINVAL) << "out of range";
  EXPECT_EQ(bind_interdomain(dom0, domu, 0xffffffffu), -XEN_EINVAL);
  ASSERT_GT(bind_interdomain(dom0, domu, evtchn_port_t(for_dom0)), 0);
  EXPECT_EQ(bind_interdomain(dom0, domu, evtchn_port_t(for_dom0)), -XEN_EINVAL) << "already bound";
  EXPECT_EQ(dom0.count_in_use(), 1u) << "the failed binds took no port";
}

// Xen's get_free_port: a dying domain's table allocates no port, whatever asks for one, and
// an unbound port it still has cannot be bound (its teardown is closing them).
TEST_F(TwoDomains, ADyingDomainGetsNoPortAndCannotBeBoundTo) {
  const int waiting = alloc_unbound(domu, 0);
  ASSERT_GT(waiting, 0);
  domu.dying = true;
  EXPECT_EQ(alloc_unbound(domu, 0), -XEN_EINVAL);
  EXPECT_EQ(bind_ipi(domu, 0), -XEN_EINVAL);
  EXPECT_EQ(bind_to_hypervisor(domu), -XEN_EINVAL);
  EXPECT_EQ(domu.allocate(), -XEN_EINVAL) << "bind_virq's way";
  EXPECT_EQ(bind_interdomain(dom0, domu, evtchn_port_t(waiting)), -XEN_EINVAL) << "towards the dying domain";
  EXPECT_EQ(bind_interdomain(domu, dom0, 1), -XEN_EINVAL) << "from it";
  EXPECT_EQ(dom0.count_in_use(), 0u) << "the refused binds took no port";
  EXPECT_EQ(domu.count_in_use(), 1u);
  EXPECT_EQ(close(domu, evtchn_port_t(waiting), find).error, 0) << "closing still works (teardown)";
}

TEST_F(TwoDomains, ADomainMayBindToItself) {
  int unbound = alloc_unbound(dom0, 0);
  int local = bind_interdomain(dom0, dom0, evtchn_port_t(unbound));
  ASSERT_EQ(local, 2);
  EXPECT_EQ(status_of(dom0, 1).u.interdomain.port, 2u);
  EXPECT_EQ(status_of(dom0, 2).u.interdomain.port, 1u);
  CloseResult closed = close(dom0, 1, find);
  EXPECT_EQ(closed.error, 0);
  evtchn_status_t s = status_of(dom0, 2);
  EXPECT_EQ(s.status, uint32_t(EVTCHNSTAT_unbound));
  EXPECT_EQ(s.u.unbound.dom, 0);
  EXPECT_EQ(status_of(dom0, 1).status, uint32_t(EVTCHNSTAT_closed));
}

TEST_F(TwoDomains, ClosingOneEndLeavesTheOtherUnboundForTheCloser) {
  int unbound = alloc_unbound(domu, 0);
  int local = bind_interdomain(dom0, domu, evtchn_port_t(unbound));
  EXPECT_EQ(close(dom0, evtchn_port_t(local), find).error, 0);
  evtchn_status_t s = status_of(domu, evtchn_port_t(unbound));
  EXPECT_EQ(s.status, uint32_t(EVTCHNSTAT_unbound));
  EXPECT_EQ(s.u.unbound.dom, 0);
  EXPECT_EQ(close(dom0, evtchn_port_t(local), find).error, -XEN_EINVAL) << "closed twice";
  EXPECT_GT(bind_interdomain(dom0, domu, evtchn_port_t(unbound)), 0) << "dom0 may bind it again";
  EXPECT_EQ(close(domu, evtchn_port_t(unbound), find).error, 0);
  EXPECT_EQ(status_of(dom0, 1).status, uint32_t(EVTCHNSTAT_unbound));
  EXPECT_EQ(status_of(dom0, 1).u.unbound.dom, 1);
}

TEST_F(TwoDomains, AGoneRemoteDoesNotStopTheClose) {
  int unbound = alloc_unbound(domu, 0);
  int local = bind_interdomain(dom0, domu, evtchn_port_t(unbound));
  EXPECT_EQ(close(dom0, evtchn_port_t(local), [](domid_t) -> Table* { return nullptr; }).error, 0);
  EXPECT_EQ(dom0.count_in_use(), 0u);
}

TEST_F(TwoDomains, FullTableIsNoSpace) {
  for (unsigned i = 1; i < 16; ++i) EXPECT_EQ(alloc_unbound(domu, 0), int(i));
  EXPECT_EQ(alloc_unbound(domu, 0), -XEN_ENOSPC);
  EXPECT_EQ(bind_interdomain(domu, dom0, 1), -XEN_ENOSPC);
}

TEST_F(TwoDomains, AHypervisorBackedPortIsInterdomainToXen) {
  int port = bind_to_hypervisor(domu);
  ASSERT_EQ(port, 1);
  evtchn_status_t s = status_of(domu, 1);
  EXPECT_EQ(s.status, uint32_t(EVTCHNSTAT_interdomain));
  EXPECT_EQ(s.u.interdomain.dom, DOMID_XEN);
  EXPECT_EQ(bind_interdomain(dom0, domu, 1), -XEN_EINVAL) << "not unbound: nobody else may bind it";
  EXPECT_EQ(close(domu, 1, find).error, 0);
}

TEST_F(TwoDomains, StatusOfVirqAndHypervisorPorts) {
  domu_ports[3].state = Channel::State::virq;
  domu_ports[3].virq = VIRQ_TIMER;
  evtchn_status_t s = status_of(domu, 3);
  EXPECT_EQ(s.status, uint32_t(EVTCHNSTAT_virq));
  EXPECT_EQ(s.u.virq, uint32_t(VIRQ_TIMER));
  domu_ports[4].state = Channel::State::hypervisor;
  domu_ports[4].remote_domain = DOMID_XEN;
  s = status_of(domu, 4);
  EXPECT_EQ(s.status, uint32_t(EVTCHNSTAT_interdomain));
  EXPECT_EQ(s.u.interdomain.dom, DOMID_XEN);
  evtchn_status_t out{};
  EXPECT_EQ(status(domu, 16, out), -XEN_EINVAL);
}

// Linux binds four IPIs per vCPU (xen_smp_intr_init): each its own port, reported as an IPI
// of its vCPU, freed by close like any other.
TEST_F(TwoDomains, IpiPortsAreOneEachAndCloseLikeOthers) {
  for (int expected = 1; expected <= 4; ++expected) EXPECT_EQ(bind_ipi(domu, 0), expected);
  evtchn_status_t s = status_of(domu, 3);
  EXPECT_EQ(s.status, uint32_t(EVTCHNSTAT_ipi));
  EXPECT_EQ(s.vcpu, 0u);
  EXPECT_EQ(bind_interdomain(dom0, domu, 3), -XEN_EINVAL) << "an IPI port is nobody else's to bind";
  EXPECT_EQ(close(domu, 3, find).error, 0);
  EXPECT_EQ(status_of(domu, 3).status, uint32_t(EVTCHNSTAT_closed));
  EXPECT_EQ(bind_ipi(domu, 0), 3) << "the lowest free port again";
  EXPECT_EQ(domu.count_in_use(), 4u);
}

TEST_F(TwoDomains, IpiOnAFullTableIsNoSpace) {
  for (unsigned i = 1; i < 16; ++i) ASSERT_EQ(bind_ipi(domu, 0), int(i));
  EXPECT_EQ(bind_ipi(domu, 0), -XEN_ENOSPC);
}

// EVTCHNOP_bind_vcpu as Xen 4.17's evtchn_bind_vcpu: unbound, interdomain and global VIRQ ports
// move to the vCPU (status reports it); IPI ports, per-vCPU VIRQs, hypervisor-served, free and
// out-of-range ports are -EINVAL and keep their vCPU.
TEST_F(TwoDomains, BindVcpuMovesWhatXenMoves) {
  const int unbound = alloc_unbound(domu, 0);
  EXPECT_EQ(bind_vcpu(domu, evtchn_port_t(unbound), 3), 0);
  EXPECT_EQ(status_of(domu, evtchn_port_t(unbound)).vcpu, 3u);
  const int local = bind_interdomain(dom0, domu, evtchn_port_t(unbound));
  EXPECT_EQ(status_of(domu, evtchn_port_t(unbound)).vcpu, 3u) << "binding keeps the notify vCPU";
  EXPECT_EQ(bind_vcpu(dom0, evtchn_port_t(local), 1), 0);
  EXPECT_EQ(status_of(dom0, evtchn_port_t(local)).vcpu, 1u);
  EXPECT_EQ(close(domu, evtchn_port_t(unbound), find).error, 0);
  EXPECT_EQ(status_of(domu, evtchn_port_t(unbound)).vcpu, 0u) << "a closed port notifies vCPU 0 again";

  const int ipi = bind_ipi(domu, 2);
  EXPECT_EQ(bind_vcpu(domu, evtchn_port_t(ipi), 1), -XEN_EINVAL);
  EXPECT_EQ(status_of(domu, evtchn_port_t(ipi)).vcpu, 2u);

  const int global = alloc_unbound(domu, 0), timer = alloc_unbound(domu, 0);
  domu.ports[global] = Channel{Channel::State::virq, VIRQ_DOM_EXC, 0, 0, 0};
  domu.ports[timer] = Channel{Channel::State::virq, VIRQ_TIMER, 2, 0, 0};
  EXPECT_EQ(bind_vcpu(domu, evtchn_port_t(global), 1), 0) << "a global VIRQ moves";
  EXPECT_EQ(domu.ports[global].vcpu, 1u);
  EXPECT_EQ(bind_vcpu(domu, evtchn_port_t(timer), 1), -XEN_EINVAL) << "a per-vCPU VIRQ does not";
  EXPECT_EQ(domu.ports[timer].vcpu, 2u);

  const int console = bind_to_hypervisor(domu);
  EXPECT_EQ(bind_vcpu(domu, evtchn_port_t(console), 1), -XEN_EINVAL) << "the hypervisor's port";
  EXPECT_EQ(bind_vcpu(domu, 0, 1), -XEN_EINVAL) << "port 0";
  EXPECT_EQ(bind_vcpu(domu, 12, 1), -XEN_EINVAL) << "a free port";
  EXPECT_EQ(bind_vcpu(domu, 16, 1), -XEN_EINVAL) << "beyond the table";
  EXPECT_EQ(bind_vcpu(domu, 0xffffffffu, 1), -XEN_EINVAL);
}

TEST(VirqIsGlobal, AllButThePerVcpuOnes) {
  for (uint32_t virq : {VIRQ_TIMER, VIRQ_DEBUG, VIRQ_XENOPROF, VIRQ_XENPMU}) EXPECT_FALSE(virq_is_global(virq)) << virq;
  for (uint32_t virq :
       {VIRQ_CONSOLE, VIRQ_DOM_EXC, VIRQ_TBUF, VIRQ_CON_RING, VIRQ_PCPU_STATE, VIRQ_ENOMEM, VIRQ_XENPMU + 1})
    EXPECT_TRUE(virq_is_global(virq)) << virq;
}

// Xen's buckets: a domain has ports 0-63 until they are all taken, then the next bucket's, and
// keeps every bucket it got. A port beyond them does not exist for any operation.
struct Buckets : ::testing::Test {
  static constexpr unsigned kCapacity = 200;  // not a multiple of a bucket: the last one is cut short
  Channel ports[kCapacity]{};
  unsigned valid = first_bucket_end(kCapacity);
  Table table{ports, kCapacity, 1, &valid};
  int status_rc(evtchn_port_t port) {
    evtchn_status_t out{};
    return status(table, port, out);
  }
};

TEST_F(Buckets, APortBeyondTheFirstBucketDoesNotExistUntilItIsNeeded) {
  EXPECT_EQ(valid, 64u);
  EXPECT_EQ(status_rc(63), 0);
  EXPECT_EQ(status_rc(64), -XEN_EINVAL);
  EXPECT_EQ(bind_interdomain(table, table, 64), -XEN_EINVAL) << "its own new port 1, then no port 64";
  EXPECT_EQ(close(table, 1, nullptr).error, -XEN_EINVAL) << "the failed bind's port was not taken";
  for (unsigned port = 1; port < 64; ++port) ASSERT_EQ(alloc_unbound(table, 1), int(port));
  EXPECT_EQ(valid, 64u) << "a full bucket is not yet a new one";
  EXPECT_EQ(alloc_unbound(table, 1), 64);
  EXPECT_EQ(valid, 128u);
  EXPECT_EQ(status_rc(127), 0);
  EXPECT_EQ(status_rc(128), -XEN_EINVAL);
}

TEST_F(Buckets, BucketsStayWhenTheirPortsAreClosed) {
  for (unsigned port = 1; port <= 64; ++port) ASSERT_EQ(alloc_unbound(table, 1), int(port));
  for (evtchn_port_t port = 1; port <= 64; ++port) ASSERT_EQ(close(table, port, nullptr).error, 0);
  EXPECT_EQ(valid, 128u);
  EXPECT_EQ(status_rc(127), 0);
  EXPECT_EQ(table.count_in_use(), 0u);
  EXPECT_EQ(alloc_unbound(table, 1), 1) << "the lowest free port again";
}

TEST_F(Buckets, TheLastBucketEndsAtTheCapacity) {
  for (unsigned port = 1; port < kCapacity; ++port) ASSERT_EQ(alloc_unbound(table, 1), int(port));
  EXPECT_EQ(valid, kCapacity);
  EXPECT_EQ(status_rc(kCapacity - 1), 0);
  EXPECT_EQ(status_rc(kCapacity), -XEN_EINVAL);
  EXPECT_EQ(alloc_unbound(table, 1), -XEN_ENOSPC);
  EXPECT_EQ(bind_ipi(table, 0), -XEN_ENOSPC);
  EXPECT_EQ(valid, kCapacity);
}
}  // namespace
}  // namespace evtchn
