#include "ptwr/adaptive_policy.h"

namespace ptwr {

static_assert((AdaptivePolicy::kTables & (AdaptivePolicy::kTables - 1)) == 0, "direct-mapped by the low bits");

AdaptivePolicy::Table& AdaptivePolicy::table(uint64_t mfn) {
  Table& t = tables_[index_of(mfn)];
  if (t.tag != tag_of(mfn)) {
    t = Table{};
    t.tag = tag_of(mfn);
  }
  return t;
}

AdaptiveDecision AdaptivePolicy::on_write_fault(uint64_t table_mfn, uint64_t activity) {
  Table& t = table(table_mfn);
  if (!t.emulate) return {AdaptivePath::detach, AdaptiveSwitch::none};
  // Only the low bits are kept: equal means nothing happened between (a wrap of exactly 2^32
  // events between two writes would look like a run once, which costs one detach).
  const uint32_t now = uint32_t(activity);
  t.run = (t.run && now == t.last_activity) ? uint8_t(t.run + 1) : uint8_t(1);
  t.last_activity = now;
  if (t.run < kRunLength) return {AdaptivePath::emulate, AdaptiveSwitch::none};
  t.emulate = false;
  t.run = 0;
  t.sparse_periods = 0;
  return {AdaptivePath::detach, AdaptiveSwitch::to_detach};
}

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
