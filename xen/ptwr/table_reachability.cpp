#include "ptwr/table_reachability.h"
#include "mm/table_links.h"

namespace ptwr {
namespace {
constexpr unsigned index_of(uint64_t entry_maddr) { return unsigned(entry_maddr & (mm::kPageBytes - 1)) / 8; }
constexpr uint64_t table_of(uint64_t entry_maddr) { return entry_maddr >> mm::kPageShift; }
constexpr mm::PagingLevel level_above(unsigned level) { return mm::PagingLevel(level + 1); }

bool is_base(uint64_t table_mfn, const mm::VcpuBasePointers& bases) {
  return table_mfn == bases.kernel_mfn || table_mfn == bases.user_mfn;
}

// Each climb below is a recursion of fixed depth (a template parameter), inlined whole: this
// runs on every detach, where the calls and the breadth-first bookkeeping cost more than the
// two or three links a fork's tables have. Every answer is the OR (or AND) over the tables
// the climb visits, so the order of the visit does not change it.

// Depth: how many climbs above `table_mfn` are left (its L4s, if not bases, end the climb).
template <int Depth>
[[gnu::always_inline]] inline bool reachable_at(const mm::FrameTable& frames, uint64_t table_mfn,
                                                const mm::VcpuBasePointers& bases) {
  if (is_base(table_mfn, bases)) return true;
  const mm::PageInfo* page = frames.find(table_mfn);
  if (page == nullptr || Depth == 0) return true;
  const mm::TableLinks links = mm::read_links(*page);
  if (links.count == 0) return false;
  if (!links.known()) return true;
  if constexpr (Depth > 0) {
    for (unsigned i = 0; i < links.count; ++i)
      if (reachable_at<Depth - 1>(frames, table_of(links.slot[i]), bases)) return true;
  }
  return false;
}

// `table_mfn` is an L<Level> met on the way up from an L1 at the indexes of `address`.
template <unsigned Level>
[[gnu::always_inline]] inline bool translates_through(const mm::FrameTable& frames, uint64_t table_mfn,
                                                      const mm::VcpuBasePointers& bases, uint64_t address) {
  const mm::PageInfo* page = frames.find(table_mfn);
  if (page == nullptr) return true;
  const mm::TableLinks links = mm::read_links(*page);
  if (!links.known()) return true;
  const unsigned index = mm::table_index(address, level_above(Level));
  for (unsigned i = 0; i < links.count; ++i) {
    if (index_of(links.slot[i]) != index) continue;
    const uint64_t upper = table_of(links.slot[i]);
    if constexpr (Level == 3) {
      if (is_base(upper, bases)) return true;
    } else {
      if (translates_through<Level + 1>(frames, upper, bases, address)) return true;
    }
  }
  return false;
}

// `table_mfn` is an L<Level> met on the way up from the entry: it and every table above it up
// to the L3s must be linked, known, and only at the indexes of `address`.
template <unsigned Level>
[[gnu::always_inline]] inline bool linked_only_at(const mm::FrameTable& frames, uint64_t table_mfn, uint64_t address) {
  const mm::PageInfo* page = frames.find(table_mfn);
  if (page == nullptr) return false;
  const mm::TableLinks links = mm::read_links(*page);
  if (links.count == 0 || !links.known()) return false;
  const unsigned index = mm::table_index(address, level_above(Level));
  for (unsigned i = 0; i < links.count; ++i) {
    if (index_of(links.slot[i]) != index) return false;
    if constexpr (Level < 3) {  // the L4s end it
      if (!linked_only_at<Level + 1>(frames, table_of(links.slot[i]), address)) return false;
    }
  }
  return true;
}
}  // namespace

// L1 -> L2 -> L3 -> L4: three climbs at most.
bool reachable(const mm::FrameTable& frames, uint64_t table_mfn, const mm::VcpuBasePointers& bases) {
  return reachable_at<3>(frames, table_mfn, bases);
}

bool may_translate_through(const mm::FrameTable& frames, uint64_t l1_mfn, const mm::VcpuBasePointers& bases,
                           uint64_t address) {
  return translates_through<1>(frames, l1_mfn, bases, address);
}

bool translated_only_at(const mm::FrameTable& frames, uint64_t entry_maddr, uint64_t address) {
  if (index_of(entry_maddr) != mm::table_index(address, mm::PagingLevel::L1)) return false;
  return linked_only_at<1>(frames, table_of(entry_maddr), address);
}
}  // namespace ptwr
