#include "mm/linear_tables.h"

#include "mm/page_refs.h"

namespace mm {

namespace {

// The XSA-240 rule and the counts' limit: `table` may hold one more linear entry, and `target`
// be linked by one more.
bool counts_allow(const PageInfo& table, const PageInfo& target) {
  return table.linear_uses == 0 && table.linear_entries < kMaxLinearCount && target.linear_entries == 0 &&
         target.linear_uses < kMaxLinearCount;
}

}  // namespace

bool take_linear_references(MmuContext& context, PagingLevel level, PageTableEntry entry, uint64_t table_mfn,
                            domid_t table_owner) {
  if (level == PagingLevel::L1 || entry.writable()) return false;
  const uint64_t target_mfn = entry.mfn();
  if (target_mfn == table_mfn) return true;  // a self-map holds nothing
  FrameTable& frames = context.frames;
  PageInfo* table = frames.find(table_mfn);
  if (table == nullptr || table->owner != table_owner) return false;
  if (get_page(frames, target_mfn, table_owner) != 0) return false;
  PageInfo& target = frames.info(target_mfn);
  // Already a validated table of this level with a type reference to add to: never validated
  // here (get_page_type would validate a frame with no type reference).
  const bool typed = target.type_refs > 0 && target.type == table_type(level) && target.validated;
  if (!typed || !counts_allow(*table, target) || get_page_type(context, target_mfn, target.type) != 0) {
    put_page(frames, target_mfn);
    return false;
  }
  ++table->linear_entries;
  ++target.linear_uses;
  return true;
}

bool is_linear_entry(const FrameTable& frames, PagingLevel level, PageTableEntry entry, uint64_t table_mfn) {
  if (level == PagingLevel::L1) return false;
  if (entry.mfn() == table_mfn) return true;
  // A normal entry's target is of the next lower level, so the type alone tells; the count is
  // asked too, so that the audit, which must not trust a type it checks, sees a corrupted type
  // as the wrong type of a normal entry's target.
  const PageInfo* target = frames.find(entry.mfn());
  return target != nullptr && target->type_refs > 0 && target->type == table_type(level) && target->linear_uses > 0;
}

void release_linear_references(FrameTable& frames, PageTableEntry entry, uint64_t table_mfn) {
  const uint64_t target_mfn = entry.mfn();
  if (target_mfn == table_mfn) return;
  PageInfo* table = frames.find(table_mfn);
  PageInfo* target = frames.find(target_mfn);
  if (table == nullptr || target == nullptr) return;       // not an entry take_linear_references took
  if (table->linear_entries > 0) --table->linear_entries;  // else a bookkeeping bug: the audit reports it
  if (target->linear_uses > 0) --target->linear_uses;
  put_page_and_type(frames, target_mfn);
}

}  // namespace mm
