#pragma once
// A user address space. 64-bit PV keeps kernel and user page tables apart: the hypervisor
// switches to the user L4 (MMUEXT_NEW_USER_BASEPTR) on return to user mode and back to the
// kernel L4 on every entry. The user L4 holds user entries only, so kernel mappings are
// unreachable from user mode; each user L4 slot is mirrored into the kernel L4 so that the
// kernel can read and write user memory while it serves a system call.
#include <stdint.h>

#include "lib/page_table_entry.h"
#include "pv-kernel-patches/pv_ops.h"

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
  // The L1 slot that maps va, if the tables down to it exist.
  bool leaf_slot(uint64_t va, pv::PageTableSlot& slot) const;

  // fork: gives `child` (fresh, created) the same mappings. Every writable page becomes
  // copy-on-write: write-protected here (the active tables) and mapped read-only there,
  // the frame shared (one more reference). The child's tables are linked top-down under its
  // pinned L4, so each is typed by the hypervisor before its entries are written; entries go
  // through PvOps one by one (in batched mode: one multicall for the whole copy).
  void copy_into(AddressSpace& child) const;
  // Makes this the address space of the CPU: the kernel L4's user slots mirror ours and the
  // hypervisor returns to our L4 in user mode.
  void activate() const;
  // Releases every mapped frame and every table. Must not be active (activate another
  // first): the hypervisor only lets go of tables nothing references.
  void destroy();

 private:
  lib::Mfn child_table(lib::Mfn parent, uint64_t va, lib::Level parent_level);
  lib::Mfn l4_{0};
};

}  // namespace kernel
