#include "tools/libxenguest/pv_layout.h"

namespace xenguest {
namespace {

constexpr uint64_t kEntriesPerTable = 512;
constexpr unsigned kLevelShift = 9;
constexpr uint64_t kMapAlignMask = (uint64_t(1) << 22) - 1;  // the mapping ends on a 4 MiB boundary
constexpr uint64_t kPresent = 1, kWritable = 2, kUser = 4, kAccessed = 0x20, kDirty = 0x40;
constexpr uint64_t kL1Bits = kPresent | kWritable | kAccessed;
constexpr uint64_t kUpperBits = kPresent | kWritable | kAccessed | kDirty | kUser;

uint64_t mask_of_bits(unsigned bits) { return (uint64_t(1) << bits) - 1; }
uint64_t shift_of_level(unsigned level) { return kPageShift + level * kLevelShift; }
uint64_t round_page_up(uint64_t bytes) { return (bytes + kPageSize - 1) & ~(kPageSize - 1); }

// libxenguest's allocation cursor: pfns from 0, virtual addresses from VIRT_BASE.
class Allocator {
 public:
  Allocator(uint64_t virt_base, uint64_t total_pages) : total_(total_pages), virt_end_(virt_base) {}

  uint64_t pfn_end() const { return pfn_end_; }
  uint64_t virt_end() const { return virt_end_; }

  // xc_dom_chk_alloc_pages: the three comparisons Xen makes so none can overflow.
  LayoutError take(uint64_t pages) {
    if (pages > total_ || pfn_end_ > total_ || pages > total_ - pfn_end_) return LayoutError::out_of_memory;
    if (pages > (~uint64_t(0) - virt_end_) / kPageSize) return LayoutError::bad_size;
    pfn_end_ += pages;
    virt_end_ += pages * kPageSize;
    return LayoutError::none;
  }

  // xc_dom_alloc_pad: pages up to a page-aligned boundary at or above the cursor.
  LayoutError pad_to(uint64_t boundary) {
    if ((boundary & (kPageSize - 1)) || boundary < virt_end_) return LayoutError::kernel_below_base;
    return take((boundary - virt_end_) / kPageSize);
  }

  // xc_dom_alloc_segment: optionally padded up to `start`, then `size` bytes rounded up to pages.
  LayoutError segment(Segment& seg, uint64_t start, uint64_t size) {
    if (start) {
      if (LayoutError e = pad_to(start); e != LayoutError::none) return e;
    }
    uint64_t pages = round_page_up(size) / kPageSize;
    if (size > ~uint64_t(0) - kPageSize) return LayoutError::bad_size;
    seg.vstart = virt_end_;
    seg.pfn = pfn_end_;
    seg.pages = pages;
    if (LayoutError e = take(pages); e != LayoutError::none) return e;
    seg.vend = seg.vstart + size;
    return LayoutError::none;
  }

  LayoutError page(uint64_t& pfn) {
    pfn = pfn_end_;
    return take(1);
  }

 private:
  uint64_t total_;
  uint64_t pfn_end_ = 0;
  uint64_t virt_end_;
};

// count_pgtables for the one mapping of a domain without INIT_P2M: the tables of each level
// that [from, to] needs, numbered from the next free pfn (L4 first, then L3s, L2s, L1s).
LayoutError count_tables(const Allocator& alloc, uint64_t from, uint64_t to, uint64_t total_pages, PvLayout& out,
                         uint64_t& table_count) {
  if (((to - from) >> kPageShift) >= total_pages) return LayoutError::mapping_too_large;
  out.mapping_from = from & kVirtMask;
  out.mapping_to = to & kVirtMask;
  table_count = 0;
  for (int level = kLevels - 1; level >= 0; --level) {
    LevelTables& tables = out.levels[level];
    tables = LevelTables{};
    tables.pfn = alloc.pfn_end() + table_count;
    if (level == kLevels - 1) {
      tables.from = 0;
      tables.to = kVirtMask;
      tables.tables = 1;
      table_count += 1;
      continue;
    }
    unsigned bits = unsigned(shift_of_level(unsigned(level) + 1));
    uint64_t mask = mask_of_bits(bits);
    tables.from = out.mapping_from & ~mask;
    tables.to = out.mapping_to | mask;
    if (tables.from < tables.to) tables.tables = ((tables.to - tables.from) >> bits) + 1;
    table_count += tables.tables;
  }
  return LayoutError::none;
}

// alloc_pgtables_pv: grow the mapping until it holds its own tables, the boot stack and 512 KiB.
LayoutError allocate_page_tables(Allocator& alloc, uint64_t total_pages, PvLayout& out) {
  const uint64_t extra = 1 + kPadBytes / kPageSize;  // the boot stack and the padding
  uint64_t pages = extra;
  uint64_t try_end = 0;
  uint64_t table_count = 0;
  for (;;) {
    if (pages > (~uint64_t(0) - alloc.virt_end()) / kPageSize - 1) return LayoutError::bad_size;
    try_end = (alloc.virt_end() + pages * kPageSize) | kMapAlignMask;
    if (try_end < alloc.virt_end()) return LayoutError::bad_size;
    if (LayoutError e = count_tables(alloc, out.virt_base, try_end, total_pages, out, table_count);
        e != LayoutError::none)
      return e;
    pages = table_count + extra;
    if (alloc.virt_end() + pages * kPageSize <= try_end + 1) break;
  }
  out.virt_pgtab_end = try_end + 1;
  return alloc.segment(out.page_tables, 0, table_count * kPageSize);
}

uint64_t entry_bits(const PvLayout& layout, int level, uint64_t pfn) {
  if (level > 0) return kUpperBits;
  return layout.is_page_table(pfn) ? (kL1Bits & ~kWritable) : kL1Bits;
}

}  // namespace

const char* describe(LayoutError error) {
  switch (error) {
    case LayoutError::none: return "no error";
    case LayoutError::out_of_memory: return "a segment is larger than the domain's memory";
    case LayoutError::mapping_too_large: return "not enough memory for the initial mapping";
    case LayoutError::kernel_below_base: return "the kernel is not page aligned at or above VIRT_BASE";
    case LayoutError::bad_size: return "a size beyond the address space";
  }
  return "unknown layout error";
}

LayoutError lay_out(const KernelPlacement& kernel, uint64_t ramdisk_bytes, uint64_t total_pages, PvLayout& out) {
  out = PvLayout{};
  if (total_pages == 0 || total_pages > (kVirtMask >> kPageShift)) return LayoutError::bad_size;
  if (kernel.virt_kend < kernel.virt_kstart || kernel.virt_kstart < kernel.virt_base)
    return LayoutError::kernel_below_base;
  out.total_pages = total_pages;
  out.virt_base = kernel.virt_base;
  Allocator alloc(kernel.virt_base, total_pages);
  // The kernel: a segment starting at its first byte, padded up to it from VIRT_BASE. A
  // kernel starting at VIRT_BASE itself is padded by nothing (Xen passes start = vstart).
  LayoutError e = alloc.segment(out.kernel, kernel.virt_kstart, kernel.virt_kend - kernel.virt_kstart);
  if (e != LayoutError::none) return e;
  if (ramdisk_bytes) {
    out.has_ramdisk = true;
    if ((e = alloc.segment(out.ramdisk, 0, ramdisk_bytes)) != LayoutError::none) return e;
  }
  if ((e = alloc.segment(out.p2m, 0, round_page_up(total_pages * 8))) != LayoutError::none) return e;
  if ((e = alloc.page(out.start_info_pfn)) != LayoutError::none) return e;
  if ((e = alloc.page(out.xenstore_pfn)) != LayoutError::none) return e;
  if ((e = alloc.page(out.console_pfn)) != LayoutError::none) return e;
  if ((e = allocate_page_tables(alloc, total_pages, out)) != LayoutError::none) return e;
  if ((e = alloc.page(out.boot_stack_pfn)) != LayoutError::none) return e;
  out.virt_alloc_end = alloc.virt_end();
  return alloc.pad_to(out.virt_pgtab_end);
}

int page_table_level(const PvLayout& layout, uint64_t pfn) {
  for (int level = 0; level < int(kLevels); ++level) {
    const LevelTables& tables = layout.levels[level];
    if (tables.tables && pfn >= tables.pfn && pfn < tables.pfn + tables.tables) return level;
  }
  return -1;
}

bool page_table_entries(const PvLayout& layout, const uint64_t* p2m, uint64_t pfn, uint64_t (&entries)[512]) {
  int level = page_table_level(layout, pfn);
  if (level < 0) return false;
  for (uint64_t& entry : entries) entry = 0;
  const LevelTables& tables = layout.levels[level];
  // What this level's entries point at: the next level's tables, or the mapped pages.
  LevelTables target;
  if (level > 0) {
    target = layout.levels[level - 1];
    if (target.tables == 0) return true;
  } else {
    target = LevelTables{layout.mapping_from, layout.mapping_to, 0, 0};
  }
  if (target.from >= tables.to || target.to <= tables.from) return true;
  const uint64_t shift = shift_of_level(unsigned(level));
  const uint64_t first = ((target.from > tables.from ? target.from : tables.from) - tables.from) >> shift;
  const uint64_t last = ((target.to < tables.to ? target.to : tables.to) - tables.from) >> shift;
  const uint64_t first_pfn =
      (((target.from > tables.from ? target.from : tables.from) - target.from) >> shift) + target.pfn;
  const uint64_t frame_first = (pfn - tables.pfn) * kEntriesPerTable;
  for (uint64_t i = 0; i < kEntriesPerTable; ++i) {
    uint64_t p = frame_first + i;
    if (p < first || p > last) continue;
    uint64_t to_pfn = first_pfn + (p - first);
    if (to_pfn >= layout.total_pages) return false;  // cannot happen for a layout lay_out made
    entries[i] = (p2m[to_pfn] << kPageShift) | entry_bits(layout, level, to_pfn);
  }
  return true;
}

}  // namespace xenguest
