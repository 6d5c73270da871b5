#pragma once
// A table's links (PageInfo::links, TableLinks) under its links lock: the entries that link a
// table live in other tables, whose updates hold those tables' frame locks, not this one's, so
// two CPUs may link or unlink one table at once. The lock is a leaf (level table_links,
// mm_locks.h): nothing is taken while it is held.
#include "mm/mm_locks.h"
#include "mm/page_info.h"

namespace mm {

class LinksGuard {
 public:
  explicit LinksGuard(const PageInfo& page) : lock_(const_cast<uint8_t&>(page.links_lock)) {
    lock_word(lock_, kLinksLockClass);
  }
  ~LinksGuard() { unlock_word(lock_, kLinksLockClass); }
  LinksGuard(const LinksGuard&) = delete;
  LinksGuard& operator=(const LinksGuard&) = delete;

 private:
  uint8_t& lock_;
};

inline void add_link(PageInfo& page, uint64_t slot_maddr) {
  LinksGuard guard(page);
  page.links.add(slot_maddr);
}
inline void remove_link(PageInfo& page, uint64_t slot_maddr) {
  LinksGuard guard(page);
  page.links.remove(slot_maddr);
}
// A copy of the links as they are now (they may change as soon as it is taken, unless the
// caller keeps every table that could link this one from changing).
inline TableLinks read_links(const PageInfo& page) {
  LinksGuard guard(page);
  return page.links;
}

}  // namespace mm
