// What the links of page-table frames (PageInfo::links) say about where a table can be
// walked: whether the running address space reaches it, which linear addresses translate
// through it, and whether an L1 entry is translated at exactly one linear address. Each
// answer climbs from a table to the L4s above it (three climbs at most, two links at most
// per table), and anything ambiguous (a link count beyond two, a link unknown) gets the
// answer that is safe for the writable-pagetable path: reachable, translating, not single.
#pragma once
#include "mm/frame_table.h"
#include "mm/vcpu_base_pointers.h"

namespace ptwr {
// The frame (an L1, L2 or L3) can be walked from one of the vCPU's base pointers.
bool reachable(const mm::FrameTable& frames, uint64_t table_mfn, const mm::VcpuBasePointers& bases);

// `address` may be translated through the L1 `l1_mfn` in the address spaces of `bases`: a
// chain of links from it to a base pointer sits at the indexes of `address` at every level.
bool may_translate_through(const mm::FrameTable& frames, uint64_t l1_mfn, const mm::VcpuBasePointers& bases,
                           uint64_t address);

// The L1 entry at `entry_maddr` is translated at `address` and at no other linear address:
// the entry sits at the L1 index of `address`, and every link of its L1, of the L2s above
// it and of the L3s above those sits at the index of `address` at its level (the L4s that
// link those L3s may be any: without PCID and with CR4.PGE off, which this hypervisor keeps,
// the TLB holds only the running address space's translations, and in every address space
// the same indexes are the same linear address). False when a table on the way is linked
// nowhere or its links are unknown: the TLB may then hold the entry at other addresses.
bool translated_only_at(const mm::FrameTable& frames, uint64_t entry_maddr, uint64_t address);
}  // namespace ptwr
