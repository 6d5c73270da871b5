#include "mm/frame_table.h"

namespace mm {

namespace {

// Everything of a frame but its count word, as a free frame has it. Its last type and flush
// stamp go too, as they always did here: the allocator flushes before it hands a freed frame
// out again (the hypervisor's before_reuse), so nothing of the frame's old use can be cached.
void reset_frame_state(PageInfo& page) {
  __atomic_store_n(&page.type_info, uint64_t{0}, __ATOMIC_RELAXED);
  __atomic_store_n(&page.linear_counts, uint32_t{0}, __ATOMIC_RELAXED);
  __atomic_store_n(&page.decoded_code, false, __ATOMIC_RELAXED);
  __atomic_store_n(&page.flush_stamp, uint64_t{0}, __ATOMIC_RELAXED);
  page.links = TableLinks{};
  page.nonzero_blocks = 0;
  page.shared_with_privileged = false;
  page.shared_read_only = false;
}

struct ListGuard {
  explicit ListGuard(PageList* list) : list_(list) {
    if (list_ != nullptr) lock_word(list_->lock, kPageListLockClass);
  }
  ~ListGuard() {
    if (list_ != nullptr) unlock_word(list_->lock, kPageListLockClass);
  }
  ListGuard(const ListGuard&) = delete;
  ListGuard& operator=(const ListGuard&) = delete;
  PageList* list_;
};

}  // namespace

void FrameTable::reset() {
  for (uint64_t mfn = 0; mfn < nr_frames_; ++mfn) infos_[mfn] = PageInfo{};
  __atomic_fetch_add(&code_generation_, 1, __ATOMIC_ACQ_REL);
}

bool FrameTable::assign(uint64_t mfn, domid_t owner) {
  PageList* list = list_of(owner);
  if (list == nullptr && owners_listed() && is_guest_domain(owner)) return false;  // no such domain
  return assign(mfn, owner, list);
}

bool FrameTable::assign(uint64_t mfn, domid_t owner, PageList* list) {
  PageInfo* page = find(mfn);
  if (page == nullptr || !page->is_free()) return false;
  ListGuard guard(list);
  if (list != nullptr && list->closed) return false;  // Xen's assign_pages: "dying"
  reset_frame_state(*page);
  if (list != nullptr) link(*list, mfn);
  // Last: from here on get_page may take references on it.
  __atomic_store_n(&page->count_info, count_word::make(1, owner, true), __ATOMIC_RELEASE);
  return true;
}

// The count reached zero: no one else can take a reference any more (get_page refuses a zero
// count), so this CPU alone finishes the free.
void FrameTable::release(uint64_t mfn) {
  PageInfo& page = infos_[mfn];
  const domid_t owner = page.owner();
  code_may_change(page);  // its next owner writes it
  PageList* list = page.listed() ? list_of(owner) : nullptr;
  bool counted = false;
  {
    ListGuard guard(list);
    // Only the list the frame is on: a frame of an earlier domain with the same id is on no
    // live list, and unlinking it from the later domain's would corrupt that list.
    counted = list != nullptr && on_list(mfn, *list);
    if (counted) unlink(*list, mfn);
  }
  reset_frame_state(page);
  __atomic_store_n(&page.count_info, count_word::kFree, __ATOMIC_RELEASE);
  released(mfn, owner, counted);
}

bool FrameTable::orphaned(uint64_t mfn) const {
  const PageInfo& page = infos_[mfn];
  if (!owners_listed() || page.is_free() || !is_guest_domain(page.owner())) return false;
  const PageList* list = list_of(page.owner());
  return list == nullptr || !on_list(mfn, *list);
}

uint64_t FrameTable::rotate(PageList& list) {
  ListGuard guard(&list);
  if (list.count == 0) return kNoListFrame;
  const uint64_t mfn = list.head;
  if (list.count > 1) {
    unlink(list, mfn);
    link(list, mfn);
  }
  return mfn;
}

// Under the list's lock.
void FrameTable::link(PageList& list, uint64_t mfn) {
  if (list.generation == 0) {  // the list's first frame: a name no list had before (0 is none)
    uint32_t generation = __atomic_add_fetch(&last_list_generation_, 1, __ATOMIC_ACQ_REL);
    if (generation == 0) generation = __atomic_add_fetch(&last_list_generation_, 1, __ATOMIC_ACQ_REL);
    __atomic_store_n(&list.generation, generation, __ATOMIC_RELEASE);
  }
  PageInfo& page = infos_[mfn];
  page.list_prev = list.tail;
  page.list_next = kNoListFrame;
  if (list.tail != kNoListFrame)
    infos_[list.tail].list_next = uint32_t(mfn);
  else
    list.head = uint32_t(mfn);
  list.tail = uint32_t(mfn);
  __atomic_store_n(&page.list_generation, list.generation, __ATOMIC_RELEASE);
  __atomic_store_n(&list.count, list.count + 1, __ATOMIC_RELEASE);
}

// Under the list's lock. Precondition: on_list(mfn, list) (so the list holds at least this
// frame: the count cannot wrap).
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
  __atomic_store_n(&page.list_generation, uint32_t{0}, __ATOMIC_RELEASE);
  __atomic_store_n(&list.count, list.count - 1, __ATOMIC_RELEASE);
}

}  // namespace mm
