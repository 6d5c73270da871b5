// Pure: where each physical CPU sits (thread, core, socket, node) as Xen 4.17 derives it from
// CPUID and the local APIC ids, and the sysctls that report it: physinfo's threads_per_core /
// cores_per_socket / nr_cpus / max_cpu_id, XEN_SYSCTL_cputopoinfo's per-CPU core, socket and
// node, and XEN_SYSCTL_getcpuinfo's count. Unit-tested (tests/unit/control_cpu_topology_test.cpp).
#pragma once
#include <stdint.h>
#include "arch/x86/cpu/cpu_mask.h"
#include "control/control_abi.h"

namespace control {
// How many low bits of an APIC id name the thread within its core (smt_shift) and the core and
// thread within their socket (package_shift).
struct TopologyShifts {
  unsigned smt_shift = 0;
  unsigned package_shift = 0;
};

// The CPUID leaves Xen reads for the shifts: leaf 0xb (extended topology, subleaves 0 and 1)
// when the CPU has it and its subleaf 0 names an SMT level, else leaf 1's logical processor
// count (EBX 23:16, with EDX's HTT bit) and leaf 4's cores per package (EAX 31:26, plus one).
struct TopologyCpuid {
  uint32_t max_basic_leaf = 0;
  uint32_t leaf1_ebx = 0, leaf1_edx = 0;
  uint32_t leaf4_eax = 0;
  uint32_t leafb0_eax = 0, leafb0_ebx = 0, leafb0_ecx = 0;
  uint32_t leafb1_eax = 0, leafb1_ebx = 0, leafb1_ecx = 0;
};
TopologyShifts topology_shifts(const TopologyCpuid& cpuid);

// One CPU's place: its core id within its socket (Xen's cpu_to_core) and its socket id
// (cpu_to_socket). Without NUMA tables every CPU is on node 0 (Xen's single fake node).
struct CpuPlace {
  uint32_t core = 0;
  uint32_t socket = 0;
  uint32_t thread = 0;
};
CpuPlace place_of(uint32_t apic_id, TopologyShifts shifts);

// The machine's CPUs: the online ones, the present ones (listed by the firmware, started or not:
// maxcpus= leaves some down) and the place of each present one (indexed by CPU number, up to
// CpuMask::capacity).
struct CpuTopology {
  CpuMask online;
  CpuMask present;
  unsigned possible = 1;  // Xen's nr_cpu_ids: the CPU numbers the firmware listed
  const CpuPlace* places = nullptr;
};

// physinfo's CPU fields as Xen's arch_do_physinfo / do_sysctl fill them: threads_per_core is
// the number of online CPUs sharing CPU 0's core, cores_per_socket the number of online ones
// sharing its socket divided by that, nr_cpus the online count, max_cpu_id nr_cpu_ids - 1 (a
// CPU maxcpus= left down counts there, not in the others).
void fill_physinfo_cpus(const CpuTopology& topology, xen_sysctl_physinfo& info);

// XEN_SYSCTL_cputopoinfo: the entries for CPUs 0 .. highest present (Xen 4.17 counts a CPU
// maxcpus= left down), each present CPU's place (online or not), an absent one's core, socket
// and node XEN_INVALID_*.
uint32_t cputopo_count(const CpuTopology& topology);
xen_sysctl_cputopo_t cputopo_entry(const CpuTopology& topology, uint32_t cpu);
// How many entries a call writes: with a null handle none (num_cpus is answered with the
// count); else min(count, the caller's num_cpus). `answered` is what num_cpus says afterwards:
// Xen rewrites it only when it differs from what it wrote (a short buffer keeps its size).
struct CputopoPlan {
  uint32_t write = 0;
  uint32_t answered = 0;
};
CputopoPlan plan_cputopoinfo(const CpuTopology& topology, uint32_t caller_num_cpus, bool null_handle);

// XEN_SYSCTL_getcpuinfo: entries for CPUs 0 .. min(max_cpus, nr_cpu_ids) - 1, each the CPU's
// idle time (0 for a CPU that is not online).
uint32_t getcpuinfo_count(const CpuTopology& topology, uint32_t max_cpus);
}  // namespace control
