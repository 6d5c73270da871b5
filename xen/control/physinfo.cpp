#include "control/physinfo.h"

namespace control {
void fill_physinfo(const MachineFacts& facts, xen_sysctl_physinfo& info) {
  info = xen_sysctl_physinfo{};
  info.threads_per_core = facts.threads_per_core;
  info.cores_per_socket = facts.cores_per_socket;
  info.nr_cpus = facts.online_cpus;
  info.max_cpu_id = facts.online_cpus - 1;  // no CPU hot-plug: the possible CPUs are the online ones
  info.nr_nodes = 1;                        // no NUMA: one node, id 0
  info.max_node_id = 0;
  info.cpu_khz = facts.cpu_khz;
  info.total_pages = facts.total_pages;
  info.free_pages = facts.free_pages;
  info.scrub_pages = 0;        // as Xen 4.17, which always reports 0 here
  info.outstanding_pages = 0;  // no claims
  info.max_mfn = facts.max_mfn;
  for (unsigned i = 0; i < 8; ++i) info.hw_cap[i] = facts.hw_cap[i];
  if (facts.hvm) info.capabilities |= XEN_SYSCTL_PHYSCAP_hvm;
  if (facts.pv) info.capabilities |= XEN_SYSCTL_PHYSCAP_pv;
  if (facts.hap) info.capabilities |= XEN_SYSCTL_PHYSCAP_hap;
  if (facts.shadow) info.capabilities |= XEN_SYSCTL_PHYSCAP_shadow;
}

uint8_t guest_physical_address_bits(uint32_t max_extended_leaf, uint32_t eax_80000008) {
  constexpr uint32_t max_bits = 52;  // Xen's PADDR_BITS
  if (max_extended_leaf < 0x80000008) return 36;
  uint32_t bits = (eax_80000008 >> 16) & 0xff;
  if (!bits) bits = eax_80000008 & 0xff;
  return uint8_t(bits > max_bits ? max_bits : bits);
}
}  // namespace control
