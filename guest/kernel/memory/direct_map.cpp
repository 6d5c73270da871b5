#include "kernel/memory/direct_map.h"

#include "kernel/console/console.h"
#include "kernel/memory/page_allocator.h"
#include "kernel/console/panic.h"
#include "kernel/memory/physical_memory.h"

namespace kernel {
namespace {

constexpr uint64_t kFramesPerL1 = 512;
constexpr uint64_t kDataFlags =
    PageTableEntry::kPresent | PageTableEntry::kWritable | PageTableEntry::kAccessed | PageTableEntry::kDirty;

// Makes sure the L2 slot covering va points to an L1 table; returns that table.
Mfn ensure_l1(uint64_t va) {
  pv::PageTableSlot l2;
  if (!walk(kernel_l4(), va, Level::l2, l2)) panic("no L2 table for %lx", va);
  PageTableEntry entry = read_entry(l2);
  if (!entry.none()) return entry.mfn();
  Mfn table = new_page_table_frame();
  long rc = pv::ops.set_entry(l2, PageTableEntry::make(table, PageTableEntry::kTableFlags));
  if (rc < 0) panic("linking L1 for %lx: %ld", va, rc);
  return table;
}

void map_chunk(uint64_t first_pfn, uint64_t end_pfn) {
  Mfn table = ensure_l1(pfn_to_va(Pfn{first_pfn}));
  pv::ops.flush();  // the new table must be linked before its entries are written
  for (uint64_t pfn = first_pfn; pfn < end_pfn; ++pfn) {
    auto slot = table_slot(table, lib::table_index(pfn_to_va(Pfn{pfn}), Level::l1), Level::l1);
    if (read_entry(slot).present()) continue;
    long rc = pv::ops.set_entry(slot, PageTableEntry::make(pfn_to_mfn(Pfn{pfn}), kDataFlags));
    if (rc < 0) panic("direct map of pfn %lx: %ld", pfn, rc);
  }
}

}  // namespace

Mfn new_page_table_frame() {
  Pfn pfn = allocate_zeroed_frame();
  Mfn mfn = pfn_to_mfn(pfn);
  auto read_only = PageTableEntry::make(mfn, PageTableEntry::kPresent | PageTableEntry::kAccessed);
  long rc = pv::ops.set_kernel_mapping(pfn_to_va(pfn), read_only);
  if (rc < 0) panic("cannot make frame %lx read-only: %ld", pfn.value, rc);
  return mfn;
}

void direct_map_extend() {
  uint64_t start = boot_info.first_free_pfn.value;
  uint64_t end = page_allocator.end();
  for (uint64_t chunk = start; chunk < end;) {
    uint64_t chunk_end = (chunk / kFramesPerL1 + 1) * kFramesPerL1;
    if (chunk_end > end) chunk_end = end;
    map_chunk(chunk, chunk_end);
    chunk = chunk_end;
  }
  long rc = pv::ops.flush();
  if (rc < 0) panic("direct map flush: %ld", rc);
  print("memory: direct map covers %lu frames (%lu MiB), %lu free\n", end, end >> 8, page_allocator.free_count());
}

Mfn kernel_l1_for(uint64_t va) { return ensure_l1(va); }

extern "C" char _image_start[], _text_end[];

void write_protect_kernel_text() {
  const uint64_t start = reinterpret_cast<uint64_t>(_image_start), end = reinterpret_cast<uint64_t>(_text_end);
  for (uint64_t va = start; va < end; va += 4096) {
    auto read_only = PageTableEntry::make(va_to_mfn(va), PageTableEntry::kPresent | PageTableEntry::kAccessed);
    long rc = pv::ops.set_kernel_mapping(va, read_only);
    if (rc < 0) panic("write-protecting kernel text at %lx: %ld", va, rc);
  }
}

}  // namespace kernel
