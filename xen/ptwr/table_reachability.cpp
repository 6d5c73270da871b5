#include "ptwr/table_reachability.h"

namespace ptwr {
namespace {
bool reachable_at(const mm::FrameTable& frames, uint64_t table_mfn, const mm::VcpuBasePointers& bases, int depth) {
  if (table_mfn == bases.kernel_mfn || table_mfn == bases.user_mfn) return true;
  const mm::PageInfo* page = frames.find(table_mfn);
  if (page == nullptr || depth == 0) return true;  // L4s that are not bases end the climb above
  const mm::TableLinks& links = page->links;
  if (links.count == 0) return false;
  if (!links.known()) return true;
  for (unsigned i = 0; i < links.count; ++i)
    if (reachable_at(frames, links.slot[i] >> mm::kPageShift, bases, depth - 1)) return true;
  return false;
}
}  // namespace

// L1 -> L2 -> L3 -> L4: three climbs at most.
bool reachable(const mm::FrameTable& frames, uint64_t table_mfn, const mm::VcpuBasePointers& bases) {
  return reachable_at(frames, table_mfn, bases, 3);
}
}  // namespace ptwr
