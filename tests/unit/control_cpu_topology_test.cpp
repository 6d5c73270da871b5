#include "control/cpu_topology.h"

#include <gtest/gtest.h>

#include <cstring>

namespace {
using control::CpuPlace;
using control::CpuTopology;
using control::TopologyCpuid;
using control::TopologyShifts;

// QEMU's leaf 0xb for -smp N as 1 socket of N cores, one thread each (QEMU 7.2's default split).
TopologyCpuid leaf_b(unsigned smt_shift, unsigned threads, unsigned package_shift, unsigned logical) {
  TopologyCpuid id;
  id.max_basic_leaf = 0xb;
  id.leafb0_eax = smt_shift;
  id.leafb0_ebx = threads;
  id.leafb0_ecx = 0x100;
  id.leafb1_eax = package_shift;
  id.leafb1_ebx = logical;
  id.leafb1_ecx = 0x201;
  return id;
}

TEST(CpuTopology, ShiftsFromLeafB) {
  TopologyShifts shifts = control::topology_shifts(leaf_b(0, 1, 2, 4));
  EXPECT_EQ(shifts.smt_shift, 0u);
  EXPECT_EQ(shifts.package_shift, 2u);
  shifts = control::topology_shifts(leaf_b(1, 2, 3, 8));
  EXPECT_EQ(shifts.smt_shift, 1u);
  EXPECT_EQ(shifts.package_shift, 3u);
}

TEST(CpuTopology, ShiftsWithoutLeafB) {
  TopologyCpuid id;
  id.max_basic_leaf = 4;
  EXPECT_EQ(control::topology_shifts(id).package_shift, 0u) << "no HTT: one logical processor per package";
  id.leaf1_edx = 1u << 28;
  id.leaf1_ebx = 4u << 16;
  id.leaf4_eax = 3u << 26;  // 4 cores
  TopologyShifts shifts = control::topology_shifts(id);
  EXPECT_EQ(shifts.smt_shift, 0u);
  EXPECT_EQ(shifts.package_shift, 2u);
  id.leaf4_eax = 1u << 26;  // 2 cores of 2 threads
  shifts = control::topology_shifts(id);
  EXPECT_EQ(shifts.smt_shift, 1u);
  EXPECT_EQ(shifts.package_shift, 2u);
  id = leaf_b(0, 0, 0, 0);  // a leaf 0xb without an SMT level: the older leaves decide
  id.leafb0_ebx = 0;
  EXPECT_EQ(control::topology_shifts(id).package_shift, 0u);
}

TEST(CpuTopology, PlaceOfApicId) {
  TopologyShifts shifts{1, 3};                     // 2 threads, 4 cores per socket
  CpuPlace place = control::place_of(13, shifts);  // 0b1101: socket 1, core 2, thread 1
  EXPECT_EQ(place.socket, 1u);
  EXPECT_EQ(place.core, 2u);
  EXPECT_EQ(place.thread, 1u);
  place = control::place_of(3, TopologyShifts{0, 2});
  EXPECT_EQ(place.core, 3u);
  EXPECT_EQ(place.socket, 0u);
}

CpuTopology four_cores(CpuPlace (&places)[64], CpuMask online, TopologyShifts shifts = {0, 2}) {
  for (unsigned cpu = 0; cpu < 64; ++cpu) places[cpu] = control::place_of(cpu, shifts);
  CpuTopology t;
  t.online = online;
  t.possible = 4;
  t.places = places;
  return t;
}

TEST(CpuTopology, PhysinfoOfFourCores) {
  CpuPlace places[64];
  xen_sysctl_physinfo info{};
  control::fill_physinfo_cpus(four_cores(places, CpuMask::first(4)), info);
  EXPECT_EQ(info.nr_cpus, 4u);
  EXPECT_EQ(info.max_cpu_id, 3u);
  EXPECT_EQ(info.threads_per_core, 1u);
  EXPECT_EQ(info.cores_per_socket, 4u);
  // Two sockets of two cores of two threads (APIC ids 0..7).
  CpuTopology t = four_cores(places, CpuMask::first(8), {1, 2});
  t.possible = 8;
  control::fill_physinfo_cpus(t, info);
  EXPECT_EQ(info.threads_per_core, 2u);
  EXPECT_EQ(info.cores_per_socket, 2u);
  EXPECT_EQ(info.nr_cpus, 8u);
  EXPECT_EQ(info.max_cpu_id, 7u);
}

TEST(CpuTopology, PhysinfoWithACpuLeftOut) {
  CpuPlace places[64];
  xen_sysctl_physinfo info{};
  CpuMask online = CpuMask::first(4).without(2);
  control::fill_physinfo_cpus(four_cores(places, online), info);
  EXPECT_EQ(info.nr_cpus, 3u);
  EXPECT_EQ(info.max_cpu_id, 3u) << "the possible CPUs, not the online ones";
  EXPECT_EQ(info.cores_per_socket, 3u);
}

TEST(CpuTopology, CputopoEntries) {
  CpuPlace places[64];
  CpuTopology t = four_cores(places, CpuMask::first(4).without(2));
  EXPECT_EQ(control::cputopo_count(t), 4u);
  xen_sysctl_cputopo_t entry = control::cputopo_entry(t, 3);
  EXPECT_EQ(entry.core, 3u);
  EXPECT_EQ(entry.socket, 0u);
  EXPECT_EQ(entry.node, 0u);
  entry = control::cputopo_entry(t, 2);
  EXPECT_EQ(entry.core, XEN_INVALID_CORE_ID);
  EXPECT_EQ(entry.socket, XEN_INVALID_SOCKET_ID);
  EXPECT_EQ(entry.node, XEN_INVALID_NODE_ID);
  EXPECT_EQ(control::cputopo_entry(t, 40).core, XEN_INVALID_CORE_ID);
  t.online = CpuMask::first(2);
  EXPECT_EQ(control::cputopo_count(t), 2u) << "up to the highest online CPU";
}

TEST(CpuTopology, CpusLeftDownByMaxcpus) {
  // -smp 4 maxcpus=2: four listed (nr_cpu_ids 4), two online; Xen 4.17 reports the other two's
  // places in cputopoinfo and counts them in max_cpu_id only.
  CpuPlace places[64];
  CpuTopology t = four_cores(places, CpuMask::first(2));
  t.present = CpuMask::first(4);
  xen_sysctl_physinfo info{};
  control::fill_physinfo_cpus(t, info);
  EXPECT_EQ(info.nr_cpus, 2u);
  EXPECT_EQ(info.max_cpu_id, 3u);
  EXPECT_EQ(info.cores_per_socket, 2u);
  EXPECT_EQ(control::cputopo_count(t), 4u);
  xen_sysctl_cputopo_t entry = control::cputopo_entry(t, 3);
  EXPECT_EQ(entry.core, 3u);
  EXPECT_EQ(entry.socket, 0u);
  EXPECT_EQ(entry.node, 0u);
  EXPECT_EQ(control::cputopo_entry(t, 4).core, XEN_INVALID_CORE_ID);
  EXPECT_EQ(control::getcpuinfo_count(t, 16), 4u);
}

TEST(CpuTopology, CputopoPlans) {
  CpuPlace places[64];
  CpuTopology t = four_cores(places, CpuMask::first(4));
  control::CputopoPlan plan = control::plan_cputopoinfo(t, 0, true);
  EXPECT_EQ(plan.write, 0u);
  EXPECT_EQ(plan.answered, 4u) << "a null handle asks for the count";
  plan = control::plan_cputopoinfo(t, 99, true);
  EXPECT_EQ(plan.answered, 4u);
  plan = control::plan_cputopoinfo(t, 2, false);
  EXPECT_EQ(plan.write, 2u);
  EXPECT_EQ(plan.answered, 2u) << "a short buffer: partial data, num_cpus left as given";
  plan = control::plan_cputopoinfo(t, 16, false);
  EXPECT_EQ(plan.write, 4u);
  EXPECT_EQ(plan.answered, 4u) << "a long buffer: the entries written";
  plan = control::plan_cputopoinfo(t, 0, false);
  EXPECT_EQ(plan.write, 0u);
  EXPECT_EQ(plan.answered, 0u);
}

TEST(CpuTopology, GetcpuinfoCount) {
  CpuPlace places[64];
  CpuTopology t = four_cores(places, CpuMask::first(4));
  EXPECT_EQ(control::getcpuinfo_count(t, 0), 0u);
  EXPECT_EQ(control::getcpuinfo_count(t, 2), 2u);
  EXPECT_EQ(control::getcpuinfo_count(t, 4), 4u);
  EXPECT_EQ(control::getcpuinfo_count(t, 1000), 4u) << "at most nr_cpu_ids";
}
}  // namespace
