#include "boot/dom0_layout.h"

#include <xen/xen.h>

namespace boot {

const char* describe(Dom0LayoutError error) {
  switch (error) {
    case Dom0LayoutError::none: return "no error";
    case Dom0LayoutError::address_overflow: return "start-of-day layout wraps around the address space";
    case Dom0LayoutError::overlaps_hypervisor: return "kernel image overlaps the hypervisor area";
    case Dom0LayoutError::not_canonical: return "start-of-day layout leaves the canonical address space";
    case Dom0LayoutError::too_small_for_kernel: return "domain memory is too small for the kernel image";
    case Dom0LayoutError::too_small_for_initrd: return "domain memory is too small for the kernel image and its initrd";
  }
  return "unknown dom0 layout error";
}

namespace {

constexpr uint64_t page_shift = 12;
constexpr uint64_t page_size = uint64_t(1) << page_shift;
constexpr uint64_t l2_shift = 21, l3_shift = 30, l4_shift = 39;
constexpr uint64_t bootstrap_granule = uint64_t(4) << 20;  // v_end is a multiple of 4 MiB
constexpr uint64_t minimum_padding = uint64_t(512) << 10;  // beyond the boot stack
constexpr uint64_t p2m_entry_size = sizeof(uint64_t);      // 64-bit guest: unsigned long
constexpr uint64_t start_info_bytes = sizeof(start_info_t) + sizeof(dom0_vga_console_info_t);
constexpr uint64_t hypervisor_start = __HYPERVISOR_VIRT_START;
constexpr uint64_t hypervisor_end = __HYPERVISOR_VIRT_END;
constexpr uint64_t lower_half_end = uint64_t(1) << 47;  // 48-bit virtual addresses

// Adds with wrap detection: once `overflowed` is set the results no longer matter.
struct CheckedAddress {
  bool overflowed = false;

  uint64_t add(uint64_t a, uint64_t b) {
    if (add_overflows(a, b)) overflowed = true;
    return a + b;
  }
  uint64_t round_up_to(uint64_t value, uint64_t alignment) { return add(value, alignment - 1) & ~(alignment - 1); }
};

// Number of 2^shift-sized, 2^shift-aligned blocks touching [low, high).
constexpr uint64_t blocks_touching(uint64_t low, uint64_t high, uint64_t shift) {
  uint64_t block = uint64_t(1) << shift;
  return (round_up(high, block) - round_down(low, block)) >> shift;
}

constexpr PageTableCounts tables_for(uint64_t v_start, uint64_t v_end) {
  return PageTableCounts{1, blocks_touching(v_start, v_end, l4_shift), blocks_touching(v_start, v_end, l3_shift),
                         blocks_touching(v_start, v_end, l2_shift)};
}

// Xen's get_order_from_bytes: the smallest order with (page_size << order) >= bytes (52 at
// most: page_size << 52 is the whole address space).
constexpr uint64_t order_for_bytes(uint64_t bytes) {
  uint64_t order = 0;
  while (order < 64 - page_shift && (page_size << order) < bytes) ++order;
  return order;
}

constexpr uint64_t pages_for(uint64_t bytes) { return (bytes + page_size - 1) >> page_shift; }

// Places everything up to the start_info area. Returns the first page-table address.
uint64_t place_data(const XenKernelInfo& kernel, uint64_t initrd_length, uint64_t nr_pages, Dom0Layout& out,
                    CheckedAddress& math) {
  out.kernel = {kernel.virt_kstart, kernel.virt_kend};
  uint64_t after_kernel = math.round_up_to(kernel.virt_kend, page_size);
  out.initrd = {after_kernel, math.add(after_kernel, initrd_length)};
  uint64_t p2m_start = math.round_up_to(out.initrd.end, page_size);
  out.p2m = {p2m_start, math.add(p2m_start, nr_pages * p2m_entry_size)};
  uint64_t start_info = math.round_up_to(out.p2m.end, page_size);
  out.start_info = {start_info, math.add(start_info, start_info_bytes)};
  return math.round_up_to(out.start_info.end, page_size);
}

// The fixed-point search: the smallest frame count that maps a region including itself. Xen
// tries 2, 3, 4, ...; jumping straight to the count the last try needed finds the same
// smallest fixed point (the count needed only grows with the frames, so it never jumps past
// it) in a few steps even for a region an image made enormous.
void place_page_tables(uint64_t page_tables_start, Dom0Layout& out, CheckedAddress& math) {
  for (uint64_t frames = 2;;) {
    uint64_t stack_start = math.add(page_tables_start, frames * page_size);
    uint64_t stack_end = math.add(stack_start, page_size);
    uint64_t v_end = math.round_up_to(stack_end, bootstrap_granule);
    if (v_end - stack_end < minimum_padding) v_end = math.add(v_end, bootstrap_granule);
    if (math.overflowed) return;
    PageTableCounts tables = tables_for(out.bootstrap.start, v_end);
    if (tables.total() <= frames) {
      out.page_tables = {page_tables_start, stack_start};
      out.boot_stack = {stack_start, stack_end};
      out.bootstrap.end = v_end;
      out.tables = tables;
      return;
    }
    frames = tables.total();
  }
}

// Xen allocates the region minus the initrd (whose pages the loader already filled) as one
// power-of-two chunk; the initrd's pages count against the domain too.
void size_allocation(uint64_t initrd_length, Dom0Layout& out) {
  uint64_t mapped_bytes = out.bootstrap.size() - round_up(initrd_length, page_size);
  out.allocation_order = order_for_bytes(mapped_bytes);
}

Dom0LayoutError check_fits(uint64_t nr_pages, const Dom0Layout& out) {
  if (out.allocation_order >= 63 || (uint64_t(1) << out.allocation_order) > nr_pages)
    return Dom0LayoutError::too_small_for_kernel;
  if ((uint64_t(1) << out.allocation_order) + out.initrd_pages > nr_pages) return Dom0LayoutError::too_small_for_initrd;
  return Dom0LayoutError::none;
}

// Everything but the fit: the layout a domain of nr_pages would get.
Dom0LayoutError plan_layout(const XenKernelInfo& kernel, uint64_t initrd_length, uint64_t nr_pages,
                            Dom0Layout& layout) {
  CheckedAddress math;
  if (nr_pages > (~uint64_t(0) / p2m_entry_size)) return Dom0LayoutError::address_overflow;
  layout.nr_pages = nr_pages;
  layout.initrd_pages = pages_for(initrd_length);
  layout.entry = kernel.entry;
  layout.bootstrap.start = kernel.virt_base;

  uint64_t page_tables_start = place_data(kernel, initrd_length, nr_pages, layout, math);
  if (math.overflowed) return Dom0LayoutError::address_overflow;
  place_page_tables(page_tables_start, layout, math);
  if (math.overflowed) return Dom0LayoutError::address_overflow;
  layout.bootstrap_pages = layout.bootstrap.size() >> page_shift;
  layout.initial_rsp = layout.boot_stack.end;
  layout.initial_rsi = layout.start_info.start;
  size_allocation(initrd_length, layout);

  if (layout.bootstrap.start < hypervisor_end && layout.bootstrap.end > hypervisor_start)
    return Dom0LayoutError::overlaps_hypervisor;
  if (!in_guest_address_space(layout.bootstrap.start, layout.bootstrap.end)) return Dom0LayoutError::not_canonical;
  return Dom0LayoutError::none;
}

}  // namespace

bool in_guest_address_space(uint64_t start, uint64_t end) {
  if (end != 0 && end < start) return false;
  if (end != 0 && end <= lower_half_end) return true;  // the lower half: L4 slots 0..255
  return start >= hypervisor_end;                      // the upper half above the hypervisor's slots (272..511)
}

bool layout_places_image(const Dom0Layout& layout, const ElfImage& image, const XenKernelInfo& kernel) {
  const VirtualRange region = layout.bootstrap;
  auto inside = [&](uint64_t start, uint64_t size) {
    return start >= region.start && start <= region.end && size <= region.end - start;
  };
  bool placed = true;
  image.for_each_loadable_segment([&](const ElfSegment& segment) {
    if (!inside(kernel.destination_of(segment), segment.memory_size)) placed = false;
  });
  if (kernel.has_hypercall_page && !inside(kernel.hypercall_page, page_size)) placed = false;
  const VirtualRange parts[] = {layout.kernel,     layout.initrd,      layout.p2m,
                                layout.start_info, layout.page_tables, layout.boot_stack};
  for (const VirtualRange& part : parts)
    if (part.end < part.start || !inside(part.start, part.size())) placed = false;
  return placed && layout.entry >= layout.kernel.start && layout.entry <= layout.kernel.end;
}

Dom0LayoutError compute_dom0_layout(const XenKernelInfo& kernel, uint64_t initrd_length, uint64_t nr_pages,
                                    Dom0Layout& out) {
  Dom0Layout layout;
  Dom0LayoutError error = plan_layout(kernel, initrd_length, nr_pages, layout);
  if (error == Dom0LayoutError::none) error = check_fits(nr_pages, layout);
  if (error != Dom0LayoutError::none) return error;
  out = layout;
  return Dom0LayoutError::none;
}

uint64_t dom0_pages_needed(const XenKernelInfo& kernel, uint64_t initrd_length, uint64_t nr_pages) {
  Dom0Layout layout;
  if (plan_layout(kernel, initrd_length, nr_pages, layout) != Dom0LayoutError::none) return 0;
  if (layout.allocation_order >= 63) return 0;
  return (uint64_t(1) << layout.allocation_order) + layout.initrd_pages;
}

size_t plan_page_table_frames(const Dom0Layout& layout, PageTableFrame* out, size_t capacity) {
  size_t count = 0;
  auto emit = [&](uint8_t level, uint64_t covers) {
    if (count < capacity) out[count] = PageTableFrame{level, covers};
    ++count;
  };
  emit(4, 0);
  uint64_t v_start = layout.bootstrap.start;
  uint64_t first_l1_block = round_down(v_start, uint64_t(1) << l2_shift);
  // Walk 2 MiB blocks; a new L2 starts every 1 GiB, a new L3 every 512 GiB.
  for (uint64_t block = first_l1_block; block < layout.bootstrap.end; block += uint64_t(1) << l2_shift) {
    bool first = block == first_l1_block;
    emit(1, block);
    if (first || (block & ((uint64_t(1) << l3_shift) - 1)) == 0) emit(2, round_down(block, uint64_t(1) << l3_shift));
    if (first || (block & ((uint64_t(1) << l4_shift) - 1)) == 0) emit(3, round_down(block, uint64_t(1) << l4_shift));
    if (block + (uint64_t(1) << l2_shift) < block) break;  // reached the top of memory
  }
  return count;
}

}  // namespace boot
