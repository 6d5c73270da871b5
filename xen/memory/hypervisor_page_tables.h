// The hypervisor's own page tables (the boot L4 and what hangs below it). Guest L4s share
// the hypervisor's slots 256..271, so everything mapped here is visible in every guest
// address space with the permissions given (only the read-only M2P is user-accessible).
#pragma once
#include <stdint.h>

namespace hypervisor_page_tables {
using FrameSource = uint64_t (*)();  // returns a fresh zeroed frame's MFN, or 0 when out of memory

uint64_t* l4();
// Maps [va, va + pages * 4 KiB) to machine frames starting at `mfn`. `flags` are the leaf
// flags; intermediate tables get present|writable plus the user bit if the leaf has it.
bool map(uint64_t va, uint64_t mfn, uint64_t pages, uint64_t flags, FrameSource new_frame);
void drop_identity_map();  // the low-memory identity map is only needed until boot is done
}  // namespace hypervisor_page_tables
