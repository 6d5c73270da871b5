#pragma once
// The kernel's direct map: pseudo-physical frame N at VIRT_BASE + N*4096. The builder maps
// only the bootstrap region; direct_map_extend() maps every other frame the allocator owns,
// so any frame (page-table pages included) can be read through pfn_to_va().
#include "lib/page_table_entry.h"

namespace kernel {

void direct_map_extend();

// Maps the kernel's text segment (code, rodata, notes) read-only, as Linux's mark_rodata_ro:
// a frame without a writable mapping is one whose instructions the hypervisor's decode cache
// can trust without reading them again (xen/emulate/decode_cache.h).
void write_protect_kernel_text();

// A zeroed frame ready to become a page table: its direct-map mapping is made read-only
// first, since the hypervisor refuses to type a page that is still mapped writable.
lib::Mfn new_page_table_frame();

// The L1 table that maps kernel address va (inside the kernel's own 1 GiB), created if missing.
lib::Mfn kernel_l1_for(uint64_t va);

}  // namespace kernel
