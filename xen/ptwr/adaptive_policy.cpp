#include "ptwr/adaptive_policy.h"

namespace ptwr {

static_assert((AdaptivePolicy::kTables & (AdaptivePolicy::kTables - 1)) == 0, "direct-mapped by the low bits");

AdaptiveSwitch AdaptivePolicy::on_reattached(uint64_t table_mfn, unsigned changed) {
  Table& t = table(table_mfn);
  if (changed > kFewEntries) {
    t.sparse_periods = 0;
    return AdaptiveSwitch::none;
  }
  if (t.emulate || ++t.sparse_periods < kSparsePeriods) return AdaptiveSwitch::none;
  t.emulate = true;
  t.run = 0;
  return AdaptiveSwitch::to_emulate;
}

void AdaptivePolicy::reset() {
  for (Table& t : tables_) t = Table{};
}

bool AdaptivePolicy::emulating(uint64_t table_mfn) const {
  const Table& t = tables_[index_of(table_mfn)];
  return t.tag == tag_of(table_mfn) && t.emulate;
}

}  // namespace ptwr
