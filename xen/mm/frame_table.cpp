#include "mm/frame_table.h"

namespace mm {

void FrameTable::reset() {
    for (uint64_t mfn = 0; mfn < nr_frames_; ++mfn) infos_[mfn] = PageInfo{};
}

bool FrameTable::assign(uint64_t mfn, domid_t owner) {
    PageInfo* page = find(mfn);
    if (page == nullptr || !page->is_free()) return false;
    *page = PageInfo{};
    page->owner = owner;
    page->allocated = true;
    page->general_refs = 1;
    return true;
}

}  // namespace mm
