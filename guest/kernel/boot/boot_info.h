#pragma once
// What the domain builder handed over at start of day (Xen's 64-bit PV contract): start_info
// in rsi, the initial mappings starting at VIRT_BASE (kernel, initrd, p2m list, start_info,
// bootstrap page tables, bootstrap stack; pseudo-physical frame N at VIRT_BASE + N*4096),
// and Xen's stack pointer at the end of that region.
#include <stddef.h>
#include <stdint.h>

#include "arch/xen.h"
#include "lib/page_table_entry.h"

namespace kernel {

constexpr uint64_t kVirtBase = 0xffffffff80000000ull;

struct BootInfo {
  start_info_t* start_info;
  uint64_t nr_pages;
  const xen_pfn_t* p2m;     // pfn -> mfn (start_info->mfn_list)
  uint64_t kernel_l4_va;    // start_info->pt_base: the active (pinned) kernel L4
  lib::Pfn first_free_pfn;  // first frame after everything the builder placed
  const uint8_t* initrd;
  size_t initrd_size;
  const char* cmdline;
};

extern BootInfo boot_info;

void boot_info_init(start_info_t* start_info, uint64_t boot_rsp);

}  // namespace kernel
