#include "mm/linear_tables.h"

#include "mm/page_refs.h"

namespace mm {

namespace {

// One more linear entry of `table` to another table (`entries`, `kOneEntry`) or one more
// linking `table` (`uses`, `kOneUse`), by one exchange of its linear word: the XSA-240 rule
// (the other count zero) and the limit are checked in the same step, so two CPUs adding the
// two kinds to one table at once cannot both succeed.
bool add_linear(PageInfo& table, uint32_t one) {
  uint32_t word = __atomic_load_n(&table.linear_counts, __ATOMIC_RELAXED);
  do {
    const uint16_t mine = one == linear_word::kOneEntry ? linear_word::entries(word) : linear_word::uses(word);
    const uint16_t other = one == linear_word::kOneEntry ? linear_word::uses(word) : linear_word::entries(word);
    if (other != 0 || mine >= kMaxLinearCount) return false;
  } while (
      !__atomic_compare_exchange_n(&table.linear_counts, &word, word + one, true, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
  return true;
}

// One less (none left is a bookkeeping bug, which the audit reports: the count stays 0).
void drop_linear(PageInfo& table, uint32_t one) {
  uint32_t word = __atomic_load_n(&table.linear_counts, __ATOMIC_RELAXED);
  do {
    const uint16_t mine = one == linear_word::kOneEntry ? linear_word::entries(word) : linear_word::uses(word);
    if (mine == 0) return;
  } while (
      !__atomic_compare_exchange_n(&table.linear_counts, &word, word - one, true, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
}

}  // namespace

bool take_linear_references(MmuContext& context, PagingLevel level, PageTableEntry entry, uint64_t table_mfn,
                            domid_t table_owner) {
  if (level == PagingLevel::L1 || entry.writable()) return false;
  const uint64_t target_mfn = entry.mfn();
  if (target_mfn == table_mfn) return true;  // a self-map holds nothing
  FrameTable& frames = context.frames;
  PageInfo* table = frames.find(table_mfn);
  if (table == nullptr || table->owner() != table_owner) return false;
  if (get_page(frames, target_mfn, table_owner) != 0) return false;
  PageInfo& target = frames.info(target_mfn);
  // Already a validated table of this level, a type reference added to it: never validated
  // here, and never waited for (get_page_type could wait for a CPU validating a table that
  // links this one back).
  if (get_validated_page_type(frames, target_mfn, table_type(level)) != 0) {
    put_page(frames, target_mfn);
    return false;
  }
  if (!add_linear(*table, linear_word::kOneEntry)) {
    put_page_and_type(frames, target_mfn);
    return false;
  }
  if (!add_linear(target, linear_word::kOneUse)) {
    drop_linear(*table, linear_word::kOneEntry);
    put_page_and_type(frames, target_mfn);
    return false;
  }
  return true;
}

bool is_linear_entry(const FrameTable& frames, PagingLevel level, PageTableEntry entry, uint64_t table_mfn) {
  if (level == PagingLevel::L1) return false;
  if (entry.mfn() == table_mfn) return true;
  // A normal entry's target is of the next lower level, so the type alone tells; the count is
  // asked too, so that the audit, which must not trust a type it checks, sees a corrupted type
  // as the wrong type of a normal entry's target.
  const PageInfo* target = frames.find(entry.mfn());
  return target != nullptr && target->has_type(table_type(level)) && target->linear_uses() > 0;
}

void release_linear_references(FrameTable& frames, PageTableEntry entry, uint64_t table_mfn) {
  const uint64_t target_mfn = entry.mfn();
  if (target_mfn == table_mfn) return;
  PageInfo* table = frames.find(table_mfn);
  PageInfo* target = frames.find(target_mfn);
  if (table == nullptr || target == nullptr) return;  // not an entry take_linear_references took
  drop_linear(*table, linear_word::kOneEntry);
  drop_linear(*target, linear_word::kOneUse);
  put_page_and_type(frames, target_mfn);
}

}  // namespace mm
