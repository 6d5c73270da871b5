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

// A frame's general count, owner and allocation, as one word that changes only by
// compare-and-exchange (Xen's count_info with the owner beside it): get_page checks the owner
// and takes the reference in one step, so a frame freed and given to another domain meanwhile
// is never referenced for the wrong owner.
//   bits 0-31  general references      bits 32-47  owner      bit 48  allocated
namespace count_word {
inline constexpr uint64_t kCountMask = 0xffffffffu;
inline constexpr unsigned kOwnerShift = 32;
inline constexpr uint64_t kOwnerMask = uint64_t{0xffff} << kOwnerShift;
inline constexpr uint64_t kAllocated = uint64_t{1} << 48;
constexpr uint32_t count(uint64_t word) { return uint32_t(word & kCountMask); }
constexpr domid_t owner(uint64_t word) { return domid_t(word >> kOwnerShift); }
constexpr bool allocated(uint64_t word) { return (word & kAllocated) != 0; }
constexpr uint64_t make(uint32_t count, domid_t owner, bool allocated) {
  return count | (uint64_t{owner} << kOwnerShift) | (allocated ? kAllocated : 0);
}
inline constexpr uint64_t kFree = make(0, kNoOwner, false);
}  // namespace count_word

// A frame's type, type count and their state, as one word that changes only by
// compare-and-exchange (Xen's type_info):
//   bits 0-31  type references   bits 32-39  PageType   bit 40  validated
//   bit 41     locked: the frame lock (page_refs.h, lock_table), Xen's PGT_locked
//   bit 42     pinned (MMUEXT_PIN_*), Xen's PGT_pinned
//   bits 48-63 the owner when the first type reference was taken: the frame's owner while it
//              has any (no frame with a type reference can be freed), so that taking a frame
//              lock checks the table is the domain's in the same compare as its type.
// A type change and a validation's start are one exchange, so no two CPUs can give a frame two
// types, and one that finds a type count of its type without `validated` waits for the CPU
// validating (or tearing down) the frame.
namespace type_word {
inline constexpr uint64_t kCountMask = 0xffffffffu;
inline constexpr unsigned kTypeShift = 32;
inline constexpr uint64_t kTypeMask = uint64_t{0xff} << kTypeShift;
inline constexpr uint64_t kValidated = uint64_t{1} << 40;
inline constexpr uint64_t kLocked = uint64_t{1} << 41;
inline constexpr uint64_t kPinned = uint64_t{1} << 42;
inline constexpr unsigned kOwnerShift = 48;
inline constexpr uint64_t kOwnerMask = uint64_t{0xffff} << kOwnerShift;
constexpr uint32_t count(uint64_t word) { return uint32_t(word & kCountMask); }
constexpr PageType type(uint64_t word) { return static_cast<PageType>((word & kTypeMask) >> kTypeShift); }
constexpr uint64_t type_bits(PageType type) { return uint64_t(static_cast<uint8_t>(type)) << kTypeShift; }
constexpr bool validated(uint64_t word) { return (word & kValidated) != 0; }
constexpr bool locked(uint64_t word) { return (word & kLocked) != 0; }
constexpr bool pinned(uint64_t word) { return (word & kPinned) != 0; }
constexpr uint64_t owner_bits(domid_t owner) { return uint64_t{owner} << kOwnerShift; }
}  // namespace type_word

// The linear page-table counts (mm/linear_tables.h) as one word, so that XSA-240's rule (never
// both nonzero) is checked and kept by one compare-and-exchange on each frame:
//   bits 0-15  linear entries of this table to other tables   bits 16-31  linear entries linking it
namespace linear_word {
constexpr uint16_t entries(uint32_t word) { return uint16_t(word); }
constexpr uint16_t uses(uint32_t word) { return uint16_t(word >> 16); }
inline constexpr uint32_t kOneEntry = 1, kOneUse = uint32_t{1} << 16;
}  // namespace linear_word

// Which entries link a frame as a page table (the L2-L4 entries pointing at it), so the
// writable-pagetable path can find and clear the slot of an L1 and tell whether a table is
// reachable from the running address space. Up to two linking entries are remembered by
// machine address (a user L3 linked from both the user L4 and the kernel L4's mirror);
// beyond that only the count is, and the links are unknown. Changed and read under the
// frame's links lock (PageInfo::read_links, entry_refs.cpp): the entries that link a table
// live in other tables, whose locks are not the table's.
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
//   general refs: every holder of the frame (allocation, each mapping, each type ref, pins,
//                 base pointers). A frame with no general reference is free.
//   type refs:    holders that rely on the frame's type (writable mappings, page-table
//                 entries of the next-higher level, pins, base pointers, a frame lock).
//                 Every type ref is accompanied by one general ref.
// The counts, owner, type and flags live in two words (count_word, type_word) that any CPU
// changes only by compare-and-exchange, through page_refs.h; the accessors read them
// atomically. The other members are each guarded as their comments say.
struct PageInfo {
  uint64_t count_info = count_word::kFree;
  uint64_t type_info = 0;
  // A hypervisor frame privileged domains may map (trace buffers), as Xen's
  // share_xen_page_with_privileged_guests: such mappings hold no references. Set at boot.
  bool shared_with_privileged = false;
  bool shared_read_only = false;  // Xen's SHARE_ro (t_info): no writable mappings
  // The decode cache trusts instructions decoded from this frame while it has no typed use
  // (no writable mapping, not a table): the frame table ticks its code generation when it
  // takes one or is freed (FrameTable::code_may_change). Read and written atomically.
  bool decoded_code = false;
  uint8_t links_lock = 0;  // the links lock (entry_refs.cpp): a leaf, level table_links
  // linear_word: changed by compare-and-exchange only.
  uint32_t linear_counts = 0;
  // The L2-L4 entries that link this frame as a page table (see TableLinks; not the linear
  // ones), under links_lock.
  TableLinks links;
  // Its place in its owner's page list (FrameTable's owner lists: Xen's d->page_list), so a
  // domain's teardown visits its own frames, not the whole table; under the list's lock. The
  // list is named by its generation (PageList::generation, 0: on no list), not by the owner's
  // id: a domain id is reused, and a later domain with the same id must never take a frame of
  // an earlier one's list for its own (nor unlink it from its own list).
  uint32_t list_generation = 0;
  uint32_t list_prev = kNoListFrame, list_next = kNoListFrame;
  // While a validated table: the blocks of its entries that may hold a nonzero entry, a
  // superset kept by validation and every store through table_access (table_blocks.h). Changed
  // only by whoever may store into the table: the holder of its frame lock, or the CPU
  // validating it.
  BlockMask nonzero_blocks = 0;
  // When a type reference was last dropped (TlbFlushClock::now()): translations of the
  // frame's old use may be in the TLB unless a full flush happened since. Read and written
  // atomically (put_page_type keeps the latest).
  uint64_t flush_stamp = 0;

  uint64_t count_word() const { return __atomic_load_n(&count_info, __ATOMIC_ACQUIRE); }
  uint64_t type_word() const { return __atomic_load_n(&type_info, __ATOMIC_ACQUIRE); }

  uint32_t general_refs() const { return count_word::count(count_word()); }
  domid_t owner() const { return count_word::owner(count_word()); }
  bool allocated() const { return count_word::allocated(count_word()); }
  uint32_t type_refs() const { return type_word::count(type_word()); }
  PageType type() const { return type_word::type(type_word()); }
  bool validated() const { return type_word::validated(type_word()); }
  bool locked() const { return type_word::locked(type_word()); }
  bool pinned() const { return type_word::pinned(type_word()); }
  uint16_t linear_entries() const { return linear_word::entries(__atomic_load_n(&linear_counts, __ATOMIC_ACQUIRE)); }
  uint16_t linear_uses() const { return linear_word::uses(__atomic_load_n(&linear_counts, __ATOMIC_ACQUIRE)); }
  uint64_t stamp() const { return __atomic_load_n(&flush_stamp, __ATOMIC_ACQUIRE); }
  bool has_decoded_code() const { return __atomic_load_n(&decoded_code, __ATOMIC_RELAXED); }

  bool is_free() const { return general_refs() == 0; }
  bool listed() const { return __atomic_load_n(&list_generation, __ATOMIC_ACQUIRE) != 0; }
  bool has_type(PageType t) const {
    const uint64_t word = type_word();
    return type_word::count(word) > 0 && type_word::type(word) == t;
  }
  bool is_validated_table() const {
    const uint64_t word = type_word();
    return type_word::count(word) > 0 && is_page_table(type_word::type(word)) && type_word::validated(word);
  }

  // Setting a state outright, with no compare-and-exchange: for a frame no other CPU can reach
  // (the unit tests' fixtures; a frame the boot allocator has just handed out).
  void set_counts(uint32_t general, domid_t owner_id, bool is_allocated) {
    __atomic_store_n(&count_info, count_word::make(general, owner_id, is_allocated), __ATOMIC_RELEASE);
  }
  void set_type_state(uint32_t refs, PageType t, bool is_validated, bool is_pinned = false) {
    __atomic_store_n(&type_info,
                     refs | type_word::type_bits(t) | (is_validated ? type_word::kValidated : 0) |
                         (is_pinned ? type_word::kPinned : 0) | type_word::owner_bits(owner()),
                     __ATOMIC_RELEASE);
  }
  void set_linear_counts(uint16_t entries, uint16_t uses) {
    __atomic_store_n(&linear_counts, uint32_t{entries} | (uint32_t{uses} << 16), __ATOMIC_RELEASE);
  }
};

}  // namespace mm
