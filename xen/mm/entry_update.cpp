#include "mm/entry_update.h"

#include "mm/entry_update_inline.h"
#include "mm/error.h"
#include "mm/page_refs.h"

namespace mm {

int update_table_entry(MmuContext& context, uint64_t table_mfn, unsigned index, PageTableEntry requested,
                       bool preserve_accessed_dirty) {
  PageInfo* table = context.frames.find(table_mfn);
  if (table == nullptr || index >= kEntriesPerTable) return error(XEN_EINVAL);
  const PageType type = lock_any_table(*table, context.domain.id);
  if (type == PageType::None) return error(XEN_EINVAL);
  const int rc = update_locked_table_entry_inline(context, LockedTable{table_mfn, *table, table_level(type)}, index,
                                                  requested, preserve_accessed_dirty);
  unlock_table(context.frames, table_mfn, *table);
  return rc;
}

int update_locked_table_entry(MmuContext& context, const LockedTable& table, unsigned index, PageTableEntry requested,
                              bool preserve_accessed_dirty) {
  return update_locked_table_entry_inline(context, table, index, requested, preserve_accessed_dirty);
}

}  // namespace mm
