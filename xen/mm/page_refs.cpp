#include "mm/page_refs.h"

#include "mm/descriptor_rules.h"
#include "mm/error.h"
#include "mm/table_access.h"
#include "mm/table_validation.h"

namespace mm {

namespace {

void announce_type_change(MmuContext& context, uint64_t mfn, PageType old_type, PageType new_type) {
  if (old_type == PageType::None || old_type == new_type) return;
  context.frames.walks_changed();
  // Nothing of the old use can be in a TLB that made a full flush since its type count
  // dropped to zero (Xen's tlbflush_filter).
  if (!context.frames.flush_clock().may_hold(context.frames.info(mfn).stamp())) return;
  context.effects.flush_domain_tlbs = true;
  if (context.type_change.flush != nullptr)
    context.type_change.flush(context.type_change.cookie, mfn, old_type, new_type);
}

// take_first_type_ref's answer when another CPU took the first reference meanwhile.
constexpr int kLookAgain = 1;

constexpr bool needs_validation(PageType type) { return is_page_table(type) || type == PageType::SegmentDescriptor; }

// Waits until the type word is no longer `word` (another CPU finished validating or tearing
// the frame down) and returns what it became.
uint64_t wait_for_change(const PageInfo& page, uint64_t word) {
  uint64_t now;
  while ((now = __atomic_load_n(&page.type_info, __ATOMIC_ACQUIRE)) == word) relax();
  return now;
}

// Type count 0 -> 1, taken by one exchange: the frame takes `type`, and a page table or a
// descriptor frame is validated under it. While validating, the frame counts this one type
// ref and is not `validated`: no CPU can lock it, and another CPU asking for the same type
// waits (get_page_type) until the validation ended one way or the other. This CPU never asks
// for the frame it validates: an entry of a table of level n only ever takes a table of level
// n - 1 (a linear entry, of level n, takes only a table validated already, without waiting),
// so a validation never reaches back to a frame it is validating.
int take_first_type_ref(MmuContext& context, uint64_t mfn, PageType type, uint64_t word) {
  PageInfo& page = context.frames.info(mfn);
  const bool validates = needs_validation(type);
  bool announced = false;
  for (;;) {
    if (type_word::count(word) != 0) return kLookAgain;  // someone else took the first
    const PageType old_type = type_word::type(word);
    if (!announced && old_type != type) {
      announce_type_change(context, mfn, old_type, type);
      announced = true;
    }
    // The owner is stable while the caller's general reference is held.
    const uint64_t first = (word & type_word::kPinned) | 1 | type_word::type_bits(type) |
                           (validates ? 0 : type_word::kValidated) | type_word::owner_bits(page.owner());
    if (__atomic_compare_exchange_n(&page.type_info, &word, first, true, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) break;
  }
  context.frames.code_may_change(page);  // writable, or a table a detach may make writable
  if (!validates) return 0;
  int rc = 0;
  if (type == PageType::SegmentDescriptor) {
    // A GDT/LDT frame holds only descriptors a PV guest may have (Xen's validate_segdesc_page).
    if (!check_descriptor_frame(table_entries(context.frames, mfn))) rc = error(XEN_EINVAL);
  } else {
    rc = validate_table(context, mfn, table_level(type));
  }
  if (rc != 0) {
    // The frame as it was: no one else changed its word meanwhile (they wait or fail).
    __atomic_store_n(&page.type_info, word, __ATOMIC_RELEASE);
    return rc;
  }
  __atomic_fetch_or(&page.type_info, type_word::kValidated, __ATOMIC_RELEASE);
  return 0;
}

}  // namespace

int take_type_ref_slowly(MmuContext& context, uint64_t mfn, PageType type) {
  PageInfo& page = context.frames.info(mfn);
  uint64_t word = __atomic_load_n(&page.type_info, __ATOMIC_ACQUIRE);
  for (;;) {
    const uint32_t count = type_word::count(word);
    if (count == 0) {
      const int rc = take_first_type_ref(context, mfn, type, word);
      if (rc != kLookAgain) return rc;
      word = __atomic_load_n(&page.type_info, __ATOMIC_ACQUIRE);
      continue;
    }
    if (type_word::type(word) != type) return error(XEN_EINVAL);
    if (!type_word::validated(word)) {  // another CPU validates it, or tears it down
      word = wait_for_change(page, word);
      continue;
    }
    if (count == kMaxReferences) return error(XEN_EINVAL);
    if (__atomic_compare_exchange_n(&page.type_info, &word, word + 1, true, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
      return 0;
  }
}

int get_validated_page_type(FrameTable& frames, uint64_t mfn, PageType type) {
  if (!frames.contains(mfn)) return error(XEN_EINVAL);
  PageInfo& page = frames.info(mfn);
  const uint64_t wanted = type_word::type_bits(type) | type_word::kValidated;
  uint64_t word = __atomic_load_n(&page.type_info, __ATOMIC_RELAXED);
  for (;;) {
    const uint32_t count = type_word::count(word);
    if ((word & (type_word::kTypeMask | type_word::kValidated)) != wanted || count == 0 || count == kMaxReferences)
      return error(XEN_EINVAL);
    if (__atomic_compare_exchange_n(&page.type_info, &word, word + 1, true, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
      return 0;
  }
}

// The last type reference of a validated table: `validated` goes first, by one exchange that
// keeps the count at one, so the table can be neither locked nor used while its entries'
// references are released; the count goes to zero last.
void release_last_table_type(FrameTable& frames, uint64_t mfn) {
  PageInfo& page = frames.info(mfn);
  uint64_t word = __atomic_load_n(&page.type_info, __ATOMIC_RELAXED);
  for (;;) {
    if (type_word::count(word) != 1 || !type_word::validated(word) || !is_page_table(type_word::type(word))) {
      // Someone took a reference meanwhile: an ordinary drop.
      if (type_word::count(word) == 0) return;
      if (__atomic_compare_exchange_n(&page.type_info, &word, word - 1, true, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
        return;
      continue;
    }
    if (__atomic_compare_exchange_n(&page.type_info, &word, word & ~type_word::kValidated, true, __ATOMIC_ACQ_REL,
                                    __ATOMIC_RELAXED))
      break;
  }
  release_table_references(frames, mfn, table_level(type_word::type(word)));
  stamp_drop(page, frames.flush_clock().now());
  __atomic_store_n(&page.type_info, (word & ~type_word::kValidated) - 1, __ATOMIC_RELEASE);
}

uint64_t wait_for_frame_lock(PageInfo& page) {
  uint64_t word;
  while (type_word::locked(word = __atomic_load_n(&page.type_info, __ATOMIC_RELAXED))) relax();
  return word;
}

void unlock_table_slowly(FrameTable& frames, uint64_t mfn) {
  PageInfo& page = frames.info(mfn);
  // The lock's type reference is the table's last: the lock goes first, then the reference, as
  // any last one (the table is torn down unless someone took a reference in between).
  __atomic_fetch_and(&page.type_info, ~type_word::kLocked, __ATOMIC_RELEASE);
  lock_released(&page, kFrameLockClass);
  put_page_type(frames, mfn);
}

int get_page_and_type(MmuContext& context, uint64_t mfn, domid_t owner, PageType type) {
  int rc = get_page(context.frames, mfn, owner);
  if (rc != 0) return rc;
  rc = get_page_type(context, mfn, type);
  if (rc != 0) put_page(context.frames, mfn);
  return rc;
}

void put_page_and_type(FrameTable& frames, uint64_t mfn) {
  put_page_type(frames, mfn);
  put_page(frames, mfn);
}

void drop_allocation(FrameTable& frames, uint64_t mfn) {
  PageInfo* page = frames.find(mfn);
  if (page == nullptr) return;
  // The allocation's flag and its reference go together, by one exchange: once only.
  uint64_t word = __atomic_load_n(&page->count_info, __ATOMIC_RELAXED);
  do {
    if (!count_word::allocated(word) || count_word::count(word) == 0) return;
  } while (!__atomic_compare_exchange_n(&page->count_info, &word, (word & ~count_word::kAllocated) - 1, true,
                                        __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
  if (count_word::count(word) == 1) frames.release(mfn);
}

}  // namespace mm
