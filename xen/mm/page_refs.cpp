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
  // Nothing of the old use can be in the TLB if a full flush happened since its type count
  // dropped to zero (Xen's tlbflush_filter).
  if (!context.frames.flush_clock().may_hold(context.frames.info(mfn).flush_stamp)) return;
  context.effects.flush_domain_tlbs = true;
  if (context.type_change.flush != nullptr)
    context.type_change.flush(context.type_change.cookie, mfn, old_type, new_type);
}

}  // namespace

// Type count 0 -> 1: the frame takes `type`, and a page table is validated under it. While
// validating, the frame already counts one type ref and is not `validated`, so any attempt to
// reach it again through its own entries (a cycle) fails instead of recursing.
int take_first_type_ref(MmuContext& context, uint64_t mfn, PageType type) {
  PageInfo& page = context.frames.info(mfn);
  context.frames.code_may_change(page);  // writable, or a table a detach may make writable
  const PageType old_type = page.type;
  const bool old_validated = page.validated;
  announce_type_change(context, mfn, old_type, type);
  page.type = type;
  page.type_refs = 1;
  if (type == PageType::SegmentDescriptor) {
    // A GDT/LDT frame holds only descriptors a PV guest may have (Xen's
    // validate_segdesc_page).
    page.validated = check_descriptor_frame(table_entries(context.frames, mfn));
    if (page.validated) return 0;
    page.type_refs = 0;
    page.type = old_type;
    page.validated = old_validated;
    return error(XEN_EINVAL);
  }
  if (!is_page_table(type)) {
    page.validated = true;
    return 0;
  }
  page.validated = false;
  int rc = validate_table(context, mfn, table_level(type));
  if (rc != 0) {
    page.type_refs = 0;
    page.type = old_type;
    page.validated = old_validated;
    return rc;
  }
  page.validated = true;
  return 0;
}

void release_table_type(FrameTable& frames, uint64_t mfn) {
  PageInfo& page = frames.info(mfn);
  // Cleared first so that the frame cannot be used as a table while it is torn down.
  page.validated = false;
  release_table_references(frames, mfn, table_level(page.type));
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
  if (page == nullptr || !page->allocated) return;
  page->allocated = false;
  put_page(frames, mfn);
}

}  // namespace mm
