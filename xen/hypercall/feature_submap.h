// XENVER_get_features: the feature bits Xen 4.17 (xen/common/kernel.c) reports to a 64-bit PV
// guest, which Linux reads before anything else and panics without some of them. Pure.
#pragma once
#include <stdint.h>
#include "abi/xen_abi.h"
#include <xen/features.h>

namespace features {
struct Submap {
  bool valid = false;  // false: -EINVAL (only submap 0 exists)
  uint32_t bits = 0;
};

constexpr Submap pv_submap(uint32_t index, bool hardware_domain, bool pae_extended_cr3) {
  if (index != 0) return {};
  uint32_t bits = (1u << XENFEAT_memory_op_vnode_supported) | (1u << XENFEAT_mmu_pt_update_preserve_ad) |
                  (1u << XENFEAT_highmem_assist) | (1u << XENFEAT_gnttab_map_avail_bits) |
                  (1u << XENFEAT_direct_mapped);  // PV: not translated, so direct mapped
  if (pae_extended_cr3) bits |= 1u << XENFEAT_pae_pgdir_above_4gb;
  if (hardware_domain) bits |= 1u << XENFEAT_dom0;
  return {true, bits};
}
}  // namespace features
