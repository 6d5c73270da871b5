// A software walk of a guest's 4-level page tables, as the CPU would do it for a ring-3
// access. The hypervisor uses it to read and write guest memory by virtual address without
// ever taking a fault on a bad guest pointer: a failed walk becomes -EFAULT.
#pragma once
#include <stdint.h>
#include "mm/machine_memory.h"

struct GuestWalk {
  bool ok = false;
  uint64_t mfn = 0;             // frame holding the byte at the address
  uint64_t l1_entry_maddr = 0;  // machine address of the final entry (for update_va_mapping)
};

// Walks for an access by ring 3 (every level needs U; a write needs RW at every level).
// Superpage entries are treated as not present: PV guests here have no superpages.
GuestWalk walk_guest(const mm::MachineMemory& memory, uint64_t l4_mfn, uint64_t va, bool write);
