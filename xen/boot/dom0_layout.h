#pragma once
// The start-of-day virtual layout of a 64-bit PV initial domain, computed as Xen 4.17's PV
// dom0 builder computes it, so a kernel sees the same addresses on our hypervisor as on Xen:
//
//   virt_base ... kernel | initrd | p2m list | start_info | page tables | boot stack | padding
//
// Everything is mapped by one bootstrap region [v_start, v_end) of 4 KiB pages. The number of
// page-table frames depends on the region's size, which includes those frames: Xen solves this
// by trying 2, 3, 4, ... frames until the tables needed to map the region fit.

#include <stddef.h>
#include <stdint.h>

#include "boot/xen_elf_notes.h"

namespace boot {

enum class Dom0LayoutError : uint8_t {
    none,
    address_overflow,
    overlaps_hypervisor,
    too_small_for_kernel,
    p2m_overlaps_bootstrap,
    too_small_for_p2m,
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
    VirtualRange bootstrap;        // [v_start, v_end): everything mapped at start of day
    VirtualRange kernel;           // [virt_kstart, virt_kend)
    VirtualRange initrd;           // empty ({0, 0}) if none or MOD_START_PFN (unmapped)
    VirtualRange p2m;              // nr_pages * 8 bytes; at INIT_P2M if the kernel asked
    bool p2m_in_bootstrap = true;  // false: p2m lives at INIT_P2M, mapped separately
    VirtualRange start_info;       // start_info_t + dom0_vga_console_info
    VirtualRange page_tables;      // nr_pt_frames pages, the L4 first
    VirtualRange boot_stack;       // one page
    PageTableCounts tables;
    uint64_t bootstrap_pages = 0;  // (v_end - v_start) / 4 KiB, initrd pages included
    uint64_t allocation_order = 0; // Xen allocates 2^order contiguous pages for the region
    uint64_t initrd_pages = 0;     // PFN_UP(initrd length)
    uint64_t entry = 0;            // initial rip
    uint64_t initial_rsp = 0;      // top of the boot stack (Xen: vstack_end)
    uint64_t initial_rsi = 0;      // start_info address
    uint64_t nr_pages = 0;

    constexpr uint64_t nr_pt_frames() const { return tables.total(); }
    constexpr uint64_t page_table_base() const { return page_tables.start; }  // si->pt_base
};

// Computes the layout for a kernel, an initrd of `initrd_length` bytes (0: none) and a domain
// of `nr_pages` pages. Fails if the region would reach the hypervisor's reserved range or the
// domain is too small (Xen's own two checks).
Dom0LayoutError compute_dom0_layout(const XenKernelInfo& kernel, uint64_t initrd_length,
                                    uint64_t nr_pages, Dom0Layout& out);

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
