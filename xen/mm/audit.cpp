#include "mm/audit.h"

#include "mm/linear_tables.h"
#include "mm/table_access.h"
#include "mm/table_validation.h"

namespace mm {

namespace {

class ReferenceTally {
 public:
  ReferenceTally(const FrameTable& frames, ExpectedFrame* expected) : frames_(frames), expected_(expected) {}

  void general(uint64_t mfn, uint32_t count = 1) {
    if (frames_.contains(mfn)) expected_[mfn].general_refs += count;
  }

  void typed(uint64_t mfn, PageType type, uint32_t count = 1) {
    if (!frames_.contains(mfn) || count == 0) return;
    ExpectedFrame& frame = expected_[mfn];
    if (frame.type_refs > 0 && frame.type != type) frame.type_conflict = true;
    frame.type = type;
    frame.type_refs += count;
  }

  // What the present entries of one validated table hold; and whether its nonzero_blocks
  // names every block that holds anything (teardown and detach look at no other).
  void table_entries(uint64_t mfn, PagingLevel level) {
    const BlockMask tracked = frames_.info(mfn).nonzero_blocks;
    for (unsigned index = 0; index < kEntriesPerTable; ++index) {
      PageTableEntry entry = load_entry(frames_, mfn, index);
      if (entry.raw() != 0 && (tracked & block_of(index)) == 0) expected_[mfn].untracked_block = true;
      if (!is_guest_slot(level, index)) continue;
      if (!entry.present()) continue;
      if (level == PagingLevel::L1 && is_io(entry.mfn())) continue;  // I/O: no refs
      if (level != PagingLevel::L1 && !frames_.contains(entry.mfn())) expected_[mfn].entry_outside_table = true;
      if (level != PagingLevel::L1 && is_linear_entry(frames_, level, entry, mfn)) {
        linear(mfn, entry.mfn(), level);
        continue;
      }
      general(entry.mfn());
      if (level != PagingLevel::L1)
        typed(entry.mfn(), table_type(next_lower(level)));
      else if (entry.writable())
        typed(entry.mfn(), PageType::Writable);
    }
  }

  // A linear entry of `table` (mm/linear_tables.h): a self-map holds nothing; one to another
  // table a general and a type ref of the table's own level, and it counts on both.
  void linear(uint64_t table, uint64_t target, PagingLevel level) {
    if (target == table || !frames_.contains(target)) return;
    general(target);
    typed(target, table_type(level));
    ++expected_[table].linear_entries;
    ++expected_[target].linear_uses;
  }

 private:
  bool is_io(uint64_t mfn) const {  // I/O memory and shared hypervisor frames: no refs
    const PageInfo* page = frames_.find(mfn);
    return page == nullptr || page->owner() == DOMID_IO || (page->owner() == DOMID_XEN && page->shared_with_privileged);
  }

  const FrameTable& frames_;
  ExpectedFrame* expected_;
};

void tally_frame_state(ReferenceTally& tally, const FrameTable& frames, uint64_t mfn) {
  const PageInfo& page = frames.info(mfn);
  if (page.allocated()) tally.general(mfn);
  if (page.pinned()) {
    tally.general(mfn);
    tally.typed(mfn, page.type());
  }
  if (page.is_validated_table()) tally.table_entries(mfn, table_level(page.type()));
}

// The audit runs while nothing changes the frame table (the end of a run, a test's end): one
// read of each word is the frame's state.
struct FrameState {
  uint32_t general_refs;
  domid_t owner;
  uint32_t type_refs;
  PageType type;
  bool validated, pinned, locked;
  uint16_t linear_entries, linear_uses;
  explicit FrameState(const PageInfo& page)
      : general_refs(page.general_refs()),
        owner(page.owner()),
        type_refs(page.type_refs()),
        type(page.type()),
        validated(page.validated()),
        pinned(page.pinned()),
        locked(page.locked()),
        linear_entries(page.linear_entries()),
        linear_uses(page.linear_uses()) {}
};

bool matches(const FrameState& actual, const ExpectedFrame& expected) {
  if (expected.type_conflict || expected.untracked_block || expected.entry_outside_table) return false;
  if (actual.general_refs != expected.general_refs) return false;
  if (actual.type_refs != expected.type_refs) return false;
  if (expected.type_refs > 0 && actual.type != expected.type) return false;
  if (actual.validated && is_page_table(actual.type) && actual.type_refs == 0) return false;
  if (actual.type_refs > 0 && !actual.validated) return false;
  if (actual.pinned && !is_page_table(actual.type)) return false;
  if (actual.locked) return false;  // a frame lock left held: its type reference is counted too
  if (actual.linear_entries != expected.linear_entries || actual.linear_uses != expected.linear_uses) return false;
  if (actual.linear_entries != 0 && actual.linear_uses != 0) return false;
  return true;
}

void record(AuditReport& report, uint64_t mfn, const FrameState& actual, const ExpectedFrame& expected, bool orphan) {
  if (report.recorded < AuditReport::kRecorded) {
    report.first[report.recorded++] = AuditMismatch{
        mfn,
        expected.general_refs,
        actual.general_refs,
        expected.type_refs,
        actual.type_refs,
        expected.type,
        actual.type_refs > 0 ? actual.type : PageType::None,
        expected.untracked_block,
        expected.entry_outside_table,
        actual.linear_entries != expected.linear_entries || actual.linear_uses != expected.linear_uses ||
            (actual.linear_entries != 0 && actual.linear_uses != 0),
        orphan,
        actual.owner,
    };
  }
  ++report.mismatches;
}

}  // namespace

AuditReport audit_frame_table(const FrameTable& frames, const ExternalHold* holds, unsigned hold_count,
                              ExpectedFrame* scratch) {
  for (uint64_t mfn = 0; mfn < frames.size(); ++mfn) scratch[mfn] = ExpectedFrame{};
  ReferenceTally tally(frames, scratch);
  for (uint64_t mfn = 0; mfn < frames.size(); ++mfn) tally_frame_state(tally, frames, mfn);
  for (unsigned i = 0; i < hold_count; ++i) {
    tally.general(holds[i].mfn, holds[i].general_refs);
    tally.typed(holds[i].mfn, holds[i].type, holds[i].type_refs);
  }
  AuditReport report;
  for (uint64_t mfn = 0; mfn < frames.size(); ++mfn) {
    const FrameState actual(frames.info(mfn));
    const bool orphan = frames.orphaned(mfn);
    if (orphan || !matches(actual, scratch[mfn])) record(report, mfn, actual, scratch[mfn], orphan);
  }
  return report;
}

}  // namespace mm
