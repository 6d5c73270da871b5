#pragma once
#include "mm/frame_table.h"

namespace mm {

// References held by something the audit cannot see in page tables: a vCPU's base pointer
// (general 1, type 1 of L4), or a hypervisor mapping of a guest frame (shared_info, a grant).
struct ExternalHold {
  uint64_t mfn = 0;
  uint32_t general_refs = 0;
  uint32_t type_refs = 0;
  PageType type = PageType::None;  // required when type_refs > 0
};

// What the audit believes one frame should look like. The caller provides one per frame as
// scratch space (the hypervisor cannot allocate inside the audit).
struct ExpectedFrame {
  uint32_t general_refs = 0;
  uint32_t type_refs = 0;
  PageType type = PageType::None;
  bool type_conflict = false;        // two holders need different types
  bool untracked_block = false;      // a validated table holds an entry outside its nonzero_blocks
  bool entry_outside_table = false;  // a validated L2-L4 links a frame the frame table lacks
  uint32_t linear_entries = 0;       // linear entries of this table to other tables (mm/linear_tables.h)
  uint32_t linear_uses = 0;          // linear entries of other tables to this one
};

struct AuditMismatch {
  uint64_t mfn = 0;
  uint32_t expected_general = 0;
  uint32_t actual_general = 0;
  uint32_t expected_type_refs = 0;
  uint32_t actual_type_refs = 0;
  PageType expected_type = PageType::None;
  PageType actual_type = PageType::None;
  bool untracked_block = false;
  bool entry_outside_table = false;
  bool linear_counts = false;  // linear_entries / linear_uses disagree (or are both nonzero)
  // Owned by a guest domain while it is on none of that domain's lists (FrameTable::orphaned):
  // left behind by a domain that is gone, or by an earlier domain with the same id.
  bool orphan = false;
  domid_t owner = kNoOwner;
};

struct AuditReport {
  static constexpr unsigned kRecorded = 8;
  uint64_t mismatches = 0;  // frames whose bookkeeping disagrees with what is reachable
  unsigned recorded = 0;    // how many of them are in `first`
  AuditMismatch first[kRecorded] = {};

  bool clean() const { return mismatches == 0; }
};

// Recomputes every frame's references from first principles and compares with the table:
//   general = allocation + pin + external holds + one per present entry of every validated
//             table that maps or links to the frame;
//   type    = pin + external holds + one per RW L1 mapping (Writable) or per L2-L4 entry
//             pointing at it (next-lower table type, or its own for a linear entry of
//             another table; a linear self-map holds nothing);
//   linear  = the linear entries a table holds and those linking it (PageInfo::linear_*),
//             never both (XSA-240).
// Pinned frames are found by their flag; base pointers and other holds come in `holds`.
// A frame also mismatches if its type differs from what its holders need, if a table is
// marked validated with no type ref, if two holders need different types, or if a
// validated table holds a nonzero entry in a block its nonzero_blocks does not name, or if a
// validated L2-L4 holds a present entry naming a frame outside the frame table (no validation
// accepts one: the entry was forged, and releasing it must not look that frame up). Tables
// that are validated but unreachable show up as type_refs without any expected holder.
// Where the frame table lists owners, a frame owned by a guest domain must also be on that
// domain's list: one that is not is owned by no live domain (an orphan) and mismatches.
// `scratch` must have frames.size() elements.
AuditReport audit_frame_table(const FrameTable& frames, const ExternalHold* holds, unsigned hold_count,
                              ExpectedFrame* scratch);

}  // namespace mm
