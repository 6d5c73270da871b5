#include "mm/entry_update.h"

#include "mm/entry_update_inline.h"
#include "mm/error.h"

namespace mm {

int update_table_entry(MmuContext& context, uint64_t table_mfn, unsigned index, PageTableEntry requested,
                       bool preserve_accessed_dirty) {
  PageInfo* table = context.frames.find(table_mfn);
  if (table == nullptr || !table->is_validated_table() || index >= kEntriesPerTable) return error(XEN_EINVAL);
  return update_validated_table_entry(context, table_mfn, *table, index, requested, preserve_accessed_dirty);
}

int update_validated_table_entry(MmuContext& context, uint64_t table_mfn, PageInfo& table, unsigned index,
                                 PageTableEntry requested, bool preserve_accessed_dirty) {
  return update_validated_table_entry_inline(context, table_mfn, table, index, requested, preserve_accessed_dirty);
}

}  // namespace mm
