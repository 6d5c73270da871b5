#include "mm/frame_table.h"

namespace mm {

void FrameTable::reset() {
  for (uint64_t mfn = 0; mfn < nr_frames_; ++mfn) infos_[mfn] = PageInfo{};
  ++code_generation_;
}

bool FrameTable::assign(uint64_t mfn, domid_t owner) {
  PageList* list = list_of(owner);
  if (list == nullptr && owners_listed() && is_guest_domain(owner)) return false;  // no such domain
  return assign(mfn, owner, list);
}

bool FrameTable::assign(uint64_t mfn, domid_t owner, PageList* list) {
  PageInfo* page = find(mfn);
  if (page == nullptr || !page->is_free()) return false;
  if (list != nullptr && list->closed) return false;  // Xen's assign_pages: "dying"
  *page = PageInfo{};
  page->owner = owner;
  page->allocated = true;
  page->general_refs = 1;
  if (list != nullptr) link(*list, mfn);
  return true;
}

void FrameTable::release(uint64_t mfn) {
  PageInfo& page = infos_[mfn];
  const domid_t owner = page.owner;
  code_may_change(page);  // its next owner writes it
  PageList* list = page.listed() ? list_of(owner) : nullptr;
  // Only the list the frame is on: a frame of an earlier domain with the same id is on no
  // live list, and unlinking it from the later domain's would corrupt that list.
  const bool counted = list != nullptr && on_list(mfn, *list);
  if (counted) unlink(*list, mfn);
  page = PageInfo{};
  released(mfn, owner, counted);
}

bool FrameTable::orphaned(uint64_t mfn) const {
  const PageInfo& page = infos_[mfn];
  if (!owners_listed() || page.is_free() || !is_guest_domain(page.owner)) return false;
  const PageList* list = list_of(page.owner);
  return list == nullptr || !on_list(mfn, *list);
}

uint64_t FrameTable::rotate(PageList& list) {
  if (list.empty()) return kNoListFrame;
  const uint64_t mfn = list.head;
  if (list.count > 1) {
    unlink(list, mfn);
    link(list, mfn);
  }
  return mfn;
}

void FrameTable::link(PageList& list, uint64_t mfn) {
  if (list.generation == 0) {  // the list's first frame: a name no list had before (0 is none)
    if (++last_list_generation_ == 0) ++last_list_generation_;
    list.generation = last_list_generation_;
  }
  PageInfo& page = infos_[mfn];
  page.list_prev = list.tail;
  page.list_next = kNoListFrame;
  if (list.tail != kNoListFrame)
    infos_[list.tail].list_next = uint32_t(mfn);
  else
    list.head = uint32_t(mfn);
  list.tail = uint32_t(mfn);
  page.list_generation = list.generation;
  ++list.count;
}

// Precondition: on_list(mfn, list) (so the list holds at least this frame: the count cannot wrap).
void FrameTable::unlink(PageList& list, uint64_t mfn) {
  PageInfo& page = infos_[mfn];
  if (page.list_prev != kNoListFrame)
    infos_[page.list_prev].list_next = page.list_next;
  else
    list.head = page.list_next;
  if (page.list_next != kNoListFrame)
    infos_[page.list_next].list_prev = page.list_prev;
  else
    list.tail = page.list_prev;
  page.list_prev = page.list_next = kNoListFrame;
  page.list_generation = 0;
  --list.count;
}

}  // namespace mm
