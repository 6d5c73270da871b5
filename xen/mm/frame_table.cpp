#include "mm/frame_table.h"

namespace mm {

void FrameTable::reset() {
  for (uint64_t mfn = 0; mfn < nr_frames_; ++mfn) infos_[mfn] = PageInfo{};
  ++code_generation_;
}

bool FrameTable::assign(uint64_t mfn, domid_t owner, PageList* list) {
  PageInfo* page = find(mfn);
  if (page == nullptr || !page->is_free()) return false;
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
  if (page.listed) {
    if (PageList* list = list_of(owner)) unlink(*list, mfn);
  }
  page = PageInfo{};
  released(mfn, owner);
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
  PageInfo& page = infos_[mfn];
  page.list_prev = list.tail;
  page.list_next = kNoListFrame;
  if (list.tail != kNoListFrame)
    infos_[list.tail].list_next = uint32_t(mfn);
  else
    list.head = uint32_t(mfn);
  list.tail = uint32_t(mfn);
  page.listed = true;
  ++list.count;
}

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
  page.listed = false;
  --list.count;
}

}  // namespace mm
