#pragma once
// What a user page fault means, decided from the faulting access and the L1 entry alone
// (Linux's do_wp_page / do_anonymous_page choice). Private writable pages shared after a
// fork are mapped read-only with kCopyOnWrite set (a software bit both Xen and ours leave to
// the guest), so a write fault on them is told apart from a write to a read-only segment.
#include <stdint.h>

#include "lib/page_table_entry.h"

namespace lib {

constexpr uint64_t kCopyOnWrite = 1ull << 9;  // PTE bit 9: available to software

enum class FaultAction {
  demand_zero,    // not present inside the heap, stack or a mapping: map a zero page
  make_writable,  // copy-on-write page no one else shares any more: just set Writable
  copy,           // copy-on-write page still shared: copy it into a new frame
  spurious,       // the entry already allows the access (a stale TLB entry): retry
  segfault,       // anything else kills the process with SIGSEGV
};

// references: the frame's reference count in the frame allocator (mappings in all processes).
FaultAction fault_action(PageTableEntry entry, bool write, bool in_demand_region, unsigned references);

// The entry that shares a private page after fork: read-only, marked copy-on-write if it was
// writable; other entries are shared unchanged.
constexpr PageTableEntry shared_after_fork(PageTableEntry entry) {
  if (!entry.writable()) return entry;
  return PageTableEntry((entry.raw() & ~PageTableEntry::kWritable) | kCopyOnWrite);
}

// The entry for a private copy (or the last remaining sharer): writable, mark cleared.
constexpr PageTableEntry private_writable(PageTableEntry entry, Mfn frame) {
  return PageTableEntry::make(frame, (entry.flags() & ~kCopyOnWrite) | PageTableEntry::kWritable |
                                         PageTableEntry::kDirty | PageTableEntry::kAccessed);
}

}  // namespace lib
