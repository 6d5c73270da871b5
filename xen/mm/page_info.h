#pragma once
#include "mm/page_table_entry.h"
#include "mm/table_blocks.h"

namespace mm {

// What a frame is currently used as. A frame has exactly one type at a time; the type only
// means something while type_refs > 0 (with a zero count the field remembers the last type,
// which tells the next user whether stale TLB entries may need a flush).
enum class PageType : uint8_t {
  None,
  Writable,
  L1,
  L2,
  L3,
  L4,
  SegmentDescriptor,  // GDT/LDT frames: every descriptor checked (mm/descriptor_rules)
};

constexpr bool is_page_table(PageType type) {
  return type == PageType::L1 || type == PageType::L2 || type == PageType::L3 || type == PageType::L4;
}
constexpr PageType table_type(PagingLevel level) {
  return static_cast<PageType>(static_cast<uint8_t>(PageType::L1) + level_number(level) - 1);
}
// Precondition: is_page_table(type).
constexpr PagingLevel table_level(PageType type) {
  return static_cast<PagingLevel>(static_cast<uint8_t>(type) - static_cast<uint8_t>(PageType::L1) + 1);
}

inline constexpr domid_t kNoOwner = DOMID_INVALID;
// No frame: the end of a page list (frame numbers in a list fit 32 bits: 16 TiB of memory).
inline constexpr uint32_t kNoListFrame = 0xffffffffu;
inline constexpr uint32_t kMaxReferences = 0xffffffffu;

// Which entries link a frame as a page table (the L2-L4 entries pointing at it), so the
// writable-pagetable path can find and clear the slot of an L1 and tell whether a table is
// reachable from the running address space. Up to two linking entries are remembered by
// machine address (a user L3 linked from both the user L4 and the kernel L4's mirror);
// beyond that only the count is, and the links are unknown.
//
// The count is as wide as a reference count, so it cannot wrap: every link holds a general
// ref on the frame, and get_page refuses at kMaxReferences (2^32 - 1), so no frame can ever
// have more links than a 32-bit count holds. (A 16-bit count wrapped after 65,536 links,
// which 128 L2s filled with one L1 reach: the L1 then read as "known, unlinked" while the
// hardware still walked it.)
struct TableLinks {
  uint32_t count = 0;
  uint64_t slot[2] = {0, 0};

  constexpr bool known() const { return count <= 2 && (count < 1 || slot[0]) && (count < 2 || slot[1]); }
  constexpr void add(uint64_t slot_maddr) {
    if (count < 2)
      slot[count] = slot_maddr;
    else
      slot[0] = slot[1] = 0;
    ++count;
  }
  constexpr void remove(uint64_t slot_maddr) {
    if (count == 0) return;
    if (slot[0] == slot_maddr) {
      slot[0] = slot[1];
      slot[1] = 0;
    } else if (slot[1] == slot_maddr) {
      slot[1] = 0;
    } else {
      slot[0] = slot[1] = 0;  // an untracked link went away: which ones remain is unknown
    }
    --count;
  }
};

// Per machine frame bookkeeping, the counterpart of Xen's struct page_info.
//   general_refs: every holder of the frame (allocation, each mapping, each type ref, pins,
//                 base pointers). A frame with general_refs == 0 is free.
//   type_refs:    holders that rely on the frame's type (writable mappings, page-table
//                 entries of the next-higher level, pins, base pointers). Every type ref
//                 is accompanied by one general ref.
struct PageInfo {
  uint32_t general_refs = 0;
  uint32_t type_refs = 0;
  domid_t owner = kNoOwner;
  PageType type = PageType::None;
  bool pinned = false;
  bool validated = false;  // page-table contents checked and their references taken
  bool allocated = false;  // the owner's allocation holds one general ref
  // A hypervisor frame privileged domains may map (trace buffers), as Xen's
  // share_xen_page_with_privileged_guests: such mappings hold no references.
  bool shared_with_privileged = false;
  bool shared_read_only = false;  // Xen's SHARE_ro (t_info): no writable mappings
  // The decode cache trusts instructions decoded from this frame while it has no typed use
  // (no writable mapping, not a table): the frame table ticks its code generation when it
  // takes one or is freed (FrameTable::code_may_change).
  bool decoded_code = false;
  // The L2-L4 entries that link this frame as a page table (see TableLinks; not the linear ones).
  TableLinks links;
  // Linear page tables (mm/linear_tables.h): how many entries of this table link another table
  // of its own level, and how many such entries of other tables link this one. At most one of
  // the two is nonzero (XSA-240); a self-map counts in neither.
  uint16_t linear_entries = 0;
  uint16_t linear_uses = 0;
  // Its place in its owner's page list (FrameTable's owner lists: Xen's d->page_list), so a
  // domain's teardown visits its own frames, not the whole table. The list is named by its
  // generation (PageList::generation, 0: on no list), not by the owner's id: a domain id is
  // reused, and a later domain with the same id must never take a frame of an earlier one's
  // list for its own (nor unlink it from its own list).
  uint32_t list_generation = 0;
  uint32_t list_prev = kNoListFrame, list_next = kNoListFrame;
  // While a validated table: the blocks of its entries that may hold a nonzero entry, a
  // superset kept by validation and every store through table_access (table_blocks.h).
  BlockMask nonzero_blocks = 0;
  // When the type count last dropped to zero (TlbFlushClock::now()): translations of the
  // frame's old use may be in the TLB unless a full flush happened since.
  uint64_t flush_stamp = 0;

  constexpr bool is_free() const { return general_refs == 0; }
  constexpr bool listed() const { return list_generation != 0; }
  constexpr bool has_type(PageType t) const { return type_refs > 0 && type == t; }
  constexpr bool is_validated_table() const { return type_refs > 0 && is_page_table(type) && validated; }
};

}  // namespace mm
