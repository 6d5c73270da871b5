#include "kernel/boot/boot_info.h"

namespace kernel {

BootInfo boot_info;

void boot_info_init(start_info_t* si, uint64_t boot_rsp) {
  boot_info.start_info = si;
  boot_info.nr_pages = si->nr_pages;
  boot_info.p2m = reinterpret_cast<const xen_pfn_t*>(si->mfn_list);
  boot_info.kernel_l4_va = si->pt_base;
  boot_info.cmdline = reinterpret_cast<const char*>(si->cmd_line);

  // The bootstrap stack is the last element of the bootstrap region and Xen's rsp is its
  // top, so everything from there on is free (the region is padded by at least 512 KiB).
  uint64_t pt_end = si->pt_base + si->nr_pt_frames * lib::kPageSize;
  uint64_t region_end = boot_rsp > pt_end ? boot_rsp : pt_end;
  boot_info.first_free_pfn = lib::Pfn{lib::page_ceil(region_end - kVirtBase) / lib::kPageSize};
  // A domU's console page may be the first page of the padding (our boot builder puts it
  // there): it is the console's, not free.
  if (!(si->flags & SIF_INITDOMAIN) && si->console.domU.mfn) {
    uint64_t pfn = machine_to_phys_mapping[si->console.domU.mfn];
    if (pfn == boot_info.first_free_pfn.value) boot_info.first_free_pfn = lib::Pfn{pfn + 1};
  }

  if (si->mod_len == 0) {
    boot_info.initrd = nullptr;
    boot_info.initrd_size = 0;
  } else if (si->flags & SIF_MOD_START_PFN) {
    // Only with XEN_ELFNOTE_MOD_START_PFN, which we do not set; kept for completeness:
    // the module then lies at a pseudo-physical frame inside the initial mapping.
    boot_info.initrd = reinterpret_cast<const uint8_t*>(kVirtBase + (si->mod_start << 12));
    boot_info.initrd_size = si->mod_len;
  } else {
    boot_info.initrd = reinterpret_cast<const uint8_t*>(si->mod_start);
    boot_info.initrd_size = si->mod_len;
  }
}

}  // namespace kernel
