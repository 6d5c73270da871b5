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

// `table_mfn` is a table of `level` (1-4); only links at the indexes of `address` count.
bool translates_at(const mm::FrameTable& frames, uint64_t table_mfn, unsigned level,
                   const mm::VcpuBasePointers& bases, uint64_t address) {
  if (level == 4) return is_base(table_mfn, bases);
  const mm::PageInfo* page = frames.find(table_mfn);
  if (page == nullptr) return true;
  const mm::TableLinks& links = page->links;
  if (!links.known()) return true;
  for (unsigned i = 0; i < links.count; ++i) {
    if (index_of(links.slot[i]) != mm::table_index(address, level_above(level))) continue;
    if (translates_at(frames, table_of(links.slot[i]), level + 1, bases, address)) return true;
  }
  return false;
}

bool linked_only_at(const mm::FrameTable& frames, uint64_t table_mfn, unsigned level, uint64_t address) {
  if (level == 4) return true;
  const mm::PageInfo* page = frames.find(table_mfn);
  if (page == nullptr) return false;
  const mm::TableLinks& links = page->links;
  if (links.count == 0 || !links.known()) return false;
  for (unsigned i = 0; i < links.count; ++i) {
    if (index_of(links.slot[i]) != mm::table_index(address, level_above(level))) return false;
    if (!linked_only_at(frames, table_of(links.slot[i]), level + 1, address)) return false;
  }
  return true;
}
}  // namespace

// L1 -> L2 -> L3 -> L4: three climbs at most.
bool reachable(const mm::FrameTable& frames, uint64_t table_mfn, const mm::VcpuBasePointers& bases) {
  return reachable_at(frames, table_mfn, bases, 3);
}

bool may_translate_through(const mm::FrameTable& frames, uint64_t l1_mfn, const mm::VcpuBasePointers& bases,
                           uint64_t address) {
  return translates_at(frames, l1_mfn, 1, bases, address);
}

bool translated_only_at(const mm::FrameTable& frames, uint64_t entry_maddr, uint64_t address) {
  if (index_of(entry_maddr) != mm::table_index(address, PagingLevel::L1)) return false;
  return linked_only_at(frames, table_of(entry_maddr), 1, address);
}
}  // namespace ptwr
