// The start-of-day layout of a 64-bit PV domU, as Xen 4.17's libxenguest lays it out
// (tools/libs/guest/xg_dom_core.c xc_dom_build_image, xg_dom_x86.c): pure logic, no I/O, so
// every number is unit-tested (tests/unit/libxenguest_pv_layout_test.cpp) and the same layout
// can be compared with what a guest sees on Xen 4.17 and on ours.
//
// Pseudo-physical frames are handed out in order from pfn 0, each at the next virtual address
// from VIRT_BASE:
//   [padding up to the kernel's first byte] kernel, ramdisk (module 0, mapped), p2m list
//   (when the kernel has no INIT_P2M), start_info, xenstore, console, page tables, boot
//   stack, [padding up to the end of the initial mapping: a 4 MiB boundary at least 512 KiB
//   past the boot stack].
// The initial page tables map [VIRT_BASE, end of the mapping) to pfns 0.. : one L4, then the
// L3s, L2s and L1s that range needs, in that order; entries of the L1s mapping page-table
// frames are read-only.
#pragma once
#include <stddef.h>
#include <stdint.h>

namespace xenguest {

constexpr uint64_t kPageSize = 4096;
constexpr unsigned kPageShift = 12;
constexpr unsigned kLevels = 4;
constexpr uint64_t kVirtMask = (uint64_t(1) << 48) - 1;  // Xen's VIRT_BITS_X86_64
constexpr uint64_t kPadBytes = 512 * 1024;               // libxenguest's padding after the boot stack

enum class LayoutError : uint8_t {
  none,
  out_of_memory,      // a segment does not fit in the domain's pages (XC_OUT_OF_MEMORY)
  mapping_too_large,  // the initial mapping needs more pfns than the domain has
  kernel_below_base,  // the kernel starts below VIRT_BASE or is not page aligned
  bad_size,           // no pages, or more than the 48-bit space
};

const char* describe(LayoutError error);

// What the builder knows of the kernel before laying out (the Xen notes' values).
struct KernelPlacement {
  uint64_t virt_base = 0;    // VIRT_BASE
  uint64_t virt_kstart = 0;  // the lowest byte a loadable segment goes to
  uint64_t virt_kend = 0;    // one past the highest
};

// A run of pfns at consecutive virtual addresses (xc_dom_seg).
struct Segment {
  uint64_t vstart = 0;
  uint64_t vend = 0;  // vstart + the size asked (not rounded up)
  uint64_t pfn = 0;
  uint64_t pages = 0;
};

// The page tables of one level (xc_dom_x86_mapping_lvl): the virtual range they cover and the
// pfn of the first of `tables` consecutive frames.
struct LevelTables {
  uint64_t from = 0;
  uint64_t to = 0;  // inclusive
  uint64_t pfn = 0;
  uint64_t tables = 0;
};

struct PvLayout {
  uint64_t total_pages = 0;  // the domain's memory, also the p2m's length
  uint64_t virt_base = 0;
  Segment kernel;
  bool has_ramdisk = false;
  Segment ramdisk;
  Segment p2m;
  uint64_t start_info_pfn = 0;
  uint64_t xenstore_pfn = 0;
  uint64_t console_pfn = 0;
  Segment page_tables;
  LevelTables levels[kLevels];  // [0] = L1s ... [3] = the L4
  uint64_t mapping_from = 0;    // the mapped virtual range, masked to 48 bits, inclusive end
  uint64_t mapping_to = 0;
  uint64_t boot_stack_pfn = 0;
  uint64_t virt_alloc_end = 0;  // after the boot stack
  uint64_t virt_pgtab_end = 0;  // end of the initial mapping; pfns below it are allocated

  uint64_t virtual_of(uint64_t pfn) const { return virt_base + pfn * kPageSize; }
  uint64_t pfn_of(uint64_t va) const { return (va - virt_base) >> kPageShift; }
  // The stack pointer and start_info pointer the vCPU starts with.
  uint64_t initial_rsp() const { return virtual_of(boot_stack_pfn + 1); }
  uint64_t start_info_address() const { return virtual_of(start_info_pfn); }
  uint64_t page_table_frames() const { return page_tables.pages; }
  bool is_page_table(uint64_t pfn) const { return pfn >= page_tables.pfn && pfn < page_tables.pfn + page_tables.pages; }
};

// Lays out a domain of `total_pages` pages for `kernel` with a ramdisk of `ramdisk_bytes`
// (0: none). Xen's order and arithmetic; `out` is complete only when the answer is none.
LayoutError lay_out(const KernelPlacement& kernel, uint64_t ramdisk_bytes, uint64_t total_pages, PvLayout& out);

// The 512 entries of page-table frame `pfn` of the layout (setup_pgtables_pv): each present
// entry is the machine address of the frame it points to (`p2m[pfn]`) with Xen's bits
// (L1: present, RW unless it maps a page-table frame, accessed; above: present, RW, accessed,
// dirty, user). `p2m` has layout.total_pages entries. False if `pfn` is no page-table frame.
bool page_table_entries(const PvLayout& layout, const uint64_t* p2m, uint64_t pfn, uint64_t (&entries)[512]);

// Which level a page-table frame is (0 = L1 .. 3 = L4), or -1.
int page_table_level(const PvLayout& layout, uint64_t pfn);

}  // namespace xenguest
