#pragma once
// The start-of-day virtual layout of a 64-bit PV initial domain, computed as Xen 4.17's PV
// dom0 builder computes it, so a kernel sees the same addresses on our hypervisor as on Xen:
//
//   virt_base ... kernel | initrd | p2m list | start_info | page tables | boot stack | padding
//
// Everything is mapped by one bootstrap region [v_start, v_end) of 4 KiB pages. The number of
// page-table frames depends on the region's size, which includes those frames: Xen solves this
// by trying 2, 3, 4, ... frames until the tables needed to map the region fit.
//
// The initrd and the p2m list are always in the region, as Xen lays out a kernel without the
// MOD_START_PFN and INIT_P2M notes. Both notes only say that a kernel can also cope with an
// unmapped initrd or a p2m list elsewhere (Linux reads SIF_MOD_START_PFN and tests where
// mfn_list points), so a kernel that gives them boots with this layout too: they are
// ignored, the same way for dom0 and every domU. (Xen 4.17 honours them for dom0.)

#include <stddef.h>
#include <stdint.h>

#include "common/elf/xen_elf_notes.h"

namespace boot {

enum class Dom0LayoutError : uint8_t {
  none,
  address_overflow,
  overlaps_hypervisor,
  not_canonical,
  too_small_for_kernel,
  too_small_for_initrd,
};

const char* describe(Dom0LayoutError error);

struct VirtualRange {
  uint64_t start = 0;
  uint64_t end = 0;
  constexpr uint64_t size() const { return end - start; }
  constexpr bool operator==(const VirtualRange&) const = default;
};

struct PageTableCounts {
  uint64_t l4 = 0, l3 = 0, l2 = 0, l1 = 0;
  constexpr uint64_t total() const { return l4 + l3 + l2 + l1; }
  constexpr bool operator==(const PageTableCounts&) const = default;
};

struct Dom0Layout {
  VirtualRange bootstrap;    // [v_start, v_end): everything mapped at start of day
  VirtualRange kernel;       // [virt_kstart, virt_kend)
  VirtualRange initrd;       // empty (start == end) if none
  VirtualRange p2m;          // nr_pages * 8 bytes
  VirtualRange start_info;   // start_info_t + dom0_vga_console_info
  VirtualRange page_tables;  // nr_pt_frames pages, the L4 first
  VirtualRange boot_stack;   // one page
  PageTableCounts tables;
  uint64_t bootstrap_pages = 0;   // (v_end - v_start) / 4 KiB, initrd pages included
  uint64_t allocation_order = 0;  // Xen allocates 2^order contiguous pages for the region
  uint64_t initrd_pages = 0;      // PFN_UP(initrd length)
  uint64_t entry = 0;             // initial rip
  uint64_t initial_rsp = 0;       // top of the boot stack (Xen: vstack_end)
  uint64_t initial_rsi = 0;       // start_info address
  uint64_t nr_pages = 0;

  constexpr uint64_t nr_pt_frames() const { return tables.total(); }
  constexpr uint64_t page_table_base() const { return page_tables.start; }  // si->pt_base
};

// Computes the layout for a kernel, an initrd of `initrd_length` bytes (0: none) and a domain
// of `nr_pages` pages. Fails if the region wraps, reaches the hypervisor's reserved range
// (Xen's check) or leaves the canonical address space (Xen would fault writing there), or if
// the domain is too small for the region and the initrd (Xen's check, with the reason told
// apart: the region alone, or with the initrd).
Dom0LayoutError compute_dom0_layout(const XenKernelInfo& kernel, uint64_t initrd_length, uint64_t nr_pages,
                                    Dom0Layout& out);

// The pages a domain of `nr_pages` pages needs for this kernel and initrd: the region's
// power-of-two allocation plus the initrd's pages (0 if the layout cannot be computed at
// all). For messages: compute_dom0_layout says too_small_* when nr_pages is below this.
uint64_t dom0_pages_needed(const XenKernelInfo& kernel, uint64_t initrd_length, uint64_t nr_pages);

// Whether every byte the builder writes for this image lies in the layout's start-of-day
// region: each loadable segment's [destination, + p_memsz), the hypercall page's 4 KiB (at the
// note's address, aligned or not), the initrd, the p2m list, start_info, the page tables and
// the boot stack; and the entry point in the kernel. True by construction for a layout
// compute_dom0_layout made from this image's notes; the builder checks it all the same before
// writing anything. Pure.
bool layout_places_image(const Dom0Layout& layout, const ElfImage& image, const XenKernelInfo& kernel);

// Whether [start, end) lies wholly in one canonical half of the address space, outside the
// hypervisor's reserved range, i.e. in L4 slots a guest may fill. end == 0 means 2^64.
bool in_guest_address_space(uint64_t start, uint64_t end);

// One frame of the page-table area: its level and the first virtual address its entries map.
struct PageTableFrame {
  uint8_t level = 0;
  uint64_t covers = 0;
};

// Lists the page-table frames in the order Xen places them (the L4 first, then the L1, L2 and
// L3 tables in the order a walk of the bootstrap region needs them). Frame i lives at
// page_tables.start + i * 4 KiB. Returns the number of frames (== nr_pt_frames()), writing at
// most `capacity` entries.
size_t plan_page_table_frames(const Dom0Layout& layout, PageTableFrame* out, size_t capacity);

}  // namespace boot
