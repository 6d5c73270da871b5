// Whether a page-table frame can be reached from the address space a vCPU runs on, found by
// following each table's links (PageInfo::links) up to an L4 and comparing it with the
// vCPU's base pointers. Anything ambiguous (linked twice, link unknown) counts as reachable:
// the writable-pagetable path may skip a TLB flush only when it is sure.
#pragma once
#include "mm/frame_table.h"
#include "mm/vcpu_base_pointers.h"

namespace ptwr {
bool reachable(const mm::FrameTable& frames, uint64_t table_mfn, const mm::VcpuBasePointers& bases);
}
