#include "ptwr/table_reachability.h"

namespace ptwr {
namespace {
using mm::PagingLevel;

constexpr unsigned index_of(uint64_t entry_maddr) { return unsigned(entry_maddr & (mm::kPageBytes - 1)) / 8; }
constexpr uint64_t table_of(uint64_t entry_maddr) { return entry_maddr >> mm::kPageShift; }
constexpr PagingLevel level_above(unsigned level) { return PagingLevel(level + 1); }

bool is_base(uint64_t table_mfn, const mm::VcpuBasePointers& bases) {
  return table_mfn == bases.kernel_mfn || table_mfn == bases.user_mfn;
}

bool reachable_at(const mm::FrameTable& frames, uint64_t table_mfn, const mm::VcpuBasePointers& bases, int depth) {
  if (is_base(table_mfn, bases)) return true;
  const mm::PageInfo* page = frames.find(table_mfn);
  if (page == nullptr || depth == 0) return true;  // L4s that are not bases end the climb above
  const mm::TableLinks& links = page->links;
  if (links.count == 0) return false;
  if (!links.known()) return true;
  for (unsigned i = 0; i < links.count; ++i)
    if (reachable_at(frames, table_of(links.slot[i]), bases, depth - 1)) return true;
  return false;
}

// The tables one climb of links reaches from a set of tables (each links at most two known
// tables above it, so an L1's climb holds at most two L2s and four L3s): kept iteratively,
// since this runs on every detach.
struct Climb {
  uint64_t tables[4];
  unsigned count = 0;
};
}  // namespace

// L1 -> L2 -> L3 -> L4: three climbs at most.
bool reachable(const mm::FrameTable& frames, uint64_t table_mfn, const mm::VcpuBasePointers& bases) {
  return reachable_at(frames, table_mfn, bases, 3);
}

bool may_translate_through(const mm::FrameTable& frames, uint64_t l1_mfn, const mm::VcpuBasePointers& bases,
                           uint64_t address) {
  Climb climb{{l1_mfn}, 1};
  for (unsigned level = 1; level < 4; ++level) {
    const unsigned index = mm::table_index(address, level_above(level));
    Climb above;
    for (unsigned t = 0; t < climb.count; ++t) {
      const mm::PageInfo* page = frames.find(climb.tables[t]);
      if (page == nullptr || !page->links.known()) return true;
      for (unsigned i = 0; i < page->links.count; ++i) {
        if (index_of(page->links.slot[i]) != index) continue;
        const uint64_t upper = table_of(page->links.slot[i]);
        if (level == 3) {
          if (is_base(upper, bases)) return true;
        } else {
          above.tables[above.count++] = upper;
        }
      }
    }
    if (above.count == 0) return false;
    climb = above;
  }
  return false;
}

bool translated_only_at(const mm::FrameTable& frames, uint64_t entry_maddr, uint64_t address) {
  if (index_of(entry_maddr) != mm::table_index(address, PagingLevel::L1)) return false;
  Climb climb{{table_of(entry_maddr)}, 1};
  for (unsigned level = 1; level < 4; ++level) {
    const unsigned index = mm::table_index(address, level_above(level));
    Climb above;
    for (unsigned t = 0; t < climb.count; ++t) {
      const mm::PageInfo* page = frames.find(climb.tables[t]);
      if (page == nullptr || page->links.count == 0 || !page->links.known()) return false;
      for (unsigned i = 0; i < page->links.count; ++i) {
        if (index_of(page->links.slot[i]) != index) return false;
        if (level < 3) above.tables[above.count++] = table_of(page->links.slot[i]);  // the L4s end it
      }
    }
    climb = above;
  }
  return true;
}
}  // namespace ptwr
