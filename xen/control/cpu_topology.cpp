#include "control/cpu_topology.h"

namespace control {
namespace {
// The smallest shift that covers `count` ids (Xen's get_count_order).
unsigned order_of(uint32_t count) {
  unsigned shift = 0;
  while (shift < 32 && (uint32_t(1) << shift) < count) ++shift;
  return shift;
}

constexpr uint32_t level_type(uint32_t ecx) { return (ecx >> 8) & 0xff; }
constexpr uint32_t level_smt = 1, level_core = 2;
}  // namespace

TopologyShifts topology_shifts(const TopologyCpuid& c) {
  TopologyShifts shifts;
  // Leaf 0xb: subleaf 0 the SMT level (EBX: logical processors at it, non-zero), subleaf 1 the
  // core level; each EAX 4:0 the shift of the next level's id.
  if (c.max_basic_leaf >= 0xb && c.leafb0_ebx != 0 && level_type(c.leafb0_ecx) == level_smt) {
    shifts.smt_shift = c.leafb0_eax & 0x1f;
    shifts.package_shift = level_type(c.leafb1_ecx) == level_core ? (c.leafb1_eax & 0x1f) : shifts.smt_shift;
    return shifts;
  }
  constexpr uint32_t htt = 1u << 28;
  uint32_t logical = (c.leaf1_edx & htt) ? (c.leaf1_ebx >> 16) & 0xff : 1;
  uint32_t cores = c.max_basic_leaf >= 4 ? ((c.leaf4_eax >> 26) & 0x3f) + 1 : 1;
  if (logical < cores) logical = cores;
  shifts.package_shift = order_of(logical);
  shifts.smt_shift = order_of(logical / cores);
  return shifts;
}

CpuPlace place_of(uint32_t apic_id, TopologyShifts shifts) {
  CpuPlace place;
  uint32_t smt_mask = shifts.smt_shift >= 32 ? ~0u : (uint32_t(1) << shifts.smt_shift) - 1;
  place.thread = apic_id & smt_mask;
  uint32_t core_bits = shifts.package_shift - shifts.smt_shift;
  uint32_t core_mask = core_bits >= 32 ? ~0u : (uint32_t(1) << core_bits) - 1;
  place.core = shifts.smt_shift >= 32 ? 0 : (apic_id >> shifts.smt_shift) & core_mask;
  place.socket = shifts.package_shift >= 32 ? 0 : apic_id >> shifts.package_shift;
  return place;
}

void fill_physinfo_cpus(const CpuTopology& topology, xen_sysctl_physinfo& info) {
  const CpuPlace& first = topology.places[0];
  uint32_t threads = 0, in_socket = 0;
  for_each_cpu(topology.online, [&](unsigned cpu) {
    const CpuPlace& place = topology.places[cpu];
    if (place.socket != first.socket) return;
    ++in_socket;
    if (place.core == first.core) ++threads;
  });
  info.threads_per_core = threads ? threads : 1;
  info.cores_per_socket = in_socket / info.threads_per_core;
  info.nr_cpus = topology.online.count();
  info.max_cpu_id = topology.possible - 1;
}

uint32_t cputopo_count(const CpuTopology& topology) {
  uint32_t last = 0;
  for_each_cpu(topology.present | topology.online, [&](unsigned cpu) { last = cpu; });
  return last + 1;
}

xen_sysctl_cputopo_t cputopo_entry(const CpuTopology& topology, uint32_t cpu) {
  if (!(topology.present | topology.online).contains(cpu))
    return {XEN_INVALID_CORE_ID, XEN_INVALID_SOCKET_ID, XEN_INVALID_NODE_ID};
  const CpuPlace& place = topology.places[cpu];
  return {place.core, place.socket, 0};
}

CputopoPlan plan_cputopoinfo(const CpuTopology& topology, uint32_t caller_num_cpus, bool null_handle) {
  uint32_t count = cputopo_count(topology);
  if (null_handle) return {0, count};
  uint32_t write = count < caller_num_cpus ? count : caller_num_cpus;
  return {write, write};
}

uint32_t getcpuinfo_count(const CpuTopology& topology, uint32_t max_cpus) {
  return max_cpus < topology.possible ? max_cpus : topology.possible;
}
}  // namespace control
