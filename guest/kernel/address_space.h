#pragma once
// A user address space. 64-bit PV keeps kernel and user page tables apart: the hypervisor
// switches to the user L4 (MMUEXT_NEW_USER_BASEPTR) on return to user mode and back to the
// kernel L4 on every entry. The user L4 holds user entries only, so kernel mappings are
// unreachable from user mode; each user L4 slot is mirrored into the kernel L4 so that the
// kernel can read and write user memory while it serves a system call.
#include <stdint.h>

#include "lib/page_table_entry.h"

namespace kernel {

constexpr uint64_t kUserLimit = 0x0000800000000000ull;  // end of the lower canonical half

class AddressSpace {
 public:
  void create();
  // Maps the frame at va (user, present, writable if asked). False if va is not user space.
  bool map(uint64_t va, lib::Pfn frame, bool writable);
  // The L1 entry mapping va; not present if any level is missing.
  lib::PageTableEntry lookup(uint64_t va) const;
  // Unmaps va and returns the frame that was mapped there (false if nothing was).
  bool unmap(uint64_t va, lib::Pfn& frame);
  lib::Mfn user_l4() const { return l4_; }

 private:
  lib::Mfn child_table(lib::Mfn parent, uint64_t va, lib::Level parent_level);
  lib::Mfn l4_{0};
};

}  // namespace kernel
