#pragma once
#include "mm/page_table_entry.h"

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
    SegmentDescriptor,  // reserved for GDT/LDT frames, not used by this module yet
};

constexpr bool is_page_table(PageType type) {
    return type == PageType::L1 || type == PageType::L2 || type == PageType::L3 ||
           type == PageType::L4;
}
constexpr PageType table_type(PagingLevel level) {
    return static_cast<PageType>(static_cast<uint8_t>(PageType::L1) + level_number(level) - 1);
}
// Precondition: is_page_table(type).
constexpr PagingLevel table_level(PageType type) {
    return static_cast<PagingLevel>(static_cast<uint8_t>(type) -
                                    static_cast<uint8_t>(PageType::L1) + 1);
}

inline constexpr domid_t kNoOwner = DOMID_INVALID;
inline constexpr uint32_t kMaxReferences = 0xffffffffu;

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
    bool validated = false;   // page-table contents checked and their references taken
    bool allocated = false;   // the owner's allocation holds one general ref

    constexpr bool is_free() const { return general_refs == 0; }
    constexpr bool has_type(PageType t) const { return type_refs > 0 && type == t; }
    constexpr bool is_validated_table() const {
        return type_refs > 0 && is_page_table(type) && validated;
    }
};

}  // namespace mm
