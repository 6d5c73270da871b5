#include "mm/entry_refs.h"

#include "mm/entry_rules.h"
#include "mm/error.h"
#include "mm/linear_tables.h"
#include "mm/page_refs.h"
#include "mm/table_links.h"

namespace mm {

namespace {

// Frames that are not RAM: beyond the frame table, or marked as I/O memory at boot.
bool is_io_frame(const FrameTable& frames, uint64_t mfn) {
  const PageInfo* page = frames.find(mfn);
  return page == nullptr || page->owner() == DOMID_IO;
}

// Hypervisor frames shared with privileged domains; like I/O memory they hold no references.
bool is_shared_hypervisor_frame(const FrameTable& frames, uint64_t mfn) {
  const PageInfo* page = frames.find(mfn);
  return page != nullptr && page->owner() == DOMID_XEN && page->shared_with_privileged;
}

// An I/O frame holds no references; read-only I/O memory is mapped without RW. The permission
// is the page owner's, as in Xen's get_page_from_l1e (DOMID_IO stands for the caller): a
// foreign page owner named with foreigndom is another guest or DOMID_XEN, neither of which
// holds I/O memory.
int check_io_mapping(const MmuContext& context, PageTableEntry& entry) {
  domid_t owner = context.owner_of_mapped_frames();
  if (owner != context.domain.id && owner != DOMID_IO) return error(XEN_EPERM);
  switch (io_frame_access(context.domain, entry.mfn(), context.interrupt_hardware)) {
    case IoFrameAccess::denied: return error(XEN_EPERM);
    case IoFrameAccess::read_only: entry = entry.without_flags(PageTableEntry::kWritable); return 0;
    case IoFrameAccess::full: return 0;
  }
  return error(XEN_EPERM);
}

int take_l1_references(MmuContext& context, PageTableEntry& entry) {
  const uint64_t target = entry.mfn();
  if (is_io_frame(context.frames, target)) return check_io_mapping(context, entry);
  const PageInfo* page = context.frames.find(target);
  const domid_t owner = page->owner();
  if (!may_map_frame_of(context.owner_of_mapped_frames(), owner)) return error(XEN_EBUSY);
  if (owner == DOMID_XEN) {  // only pages shared with privileged domains; no references
    bool refused = !page->shared_with_privileged || (entry.writable() && page->shared_read_only);
    return refused ? error(XEN_EBUSY) : 0;
  }
  // A frame freed meanwhile and given to another owner: get_page refuses it.
  return take_ordinary_frame_references(context, entry, owner);
}

}  // namespace

int check_io_entry_bits(const MmuContext& context, PageTableEntry entry) {
  if (context.domain.privileged && is_io_frame(context.frames, entry.mfn()))
    entry = entry.without_flags(kCacheAttributeFlags);
  return check_entry_bits(PagingLevel::L1, entry);
}

int take_entry_references(MmuContext& context, PagingLevel level, PageTableEntry& entry, domid_t table_owner,
                          uint64_t slot_maddr) {
  if (!entry.present()) return 0;
  int rc = check_new_entry_bits(context, level, entry);
  if (rc != 0) return rc;
  return take_checked_entry_references(context, level, entry, table_owner, slot_maddr);
}

int take_other_entry_references(MmuContext& context, PagingLevel level, PageTableEntry& entry, domid_t table_owner,
                                uint64_t slot_maddr) {
  if (level == PagingLevel::L1) return take_l1_references(context, entry);
  int rc = get_page_and_type(context, entry.mfn(), table_owner, table_type(next_lower(level)));
  if (rc == 0) add_link(context.frames.info(entry.mfn()), slot_maddr);
  // As Xen's get_page_from_l{2,3,4}e: only a refusal of the target's type may be a linear entry.
  if (rc == error(XEN_EINVAL) && take_linear_references(context, level, entry, slot_maddr >> kPageShift, table_owner))
    return 0;
  return rc;
}

void release_present_entry_references(FrameTable& frames, PagingLevel level, PageTableEntry entry,
                                      uint64_t slot_maddr) {
  if (level == PagingLevel::L1) return release_l1_entry_references(frames, entry);
  const uint64_t table_mfn = slot_maddr >> kPageShift;
  if (is_linear_entry(frames, level, entry, table_mfn)) return release_linear_references(frames, entry, table_mfn);
  // An L2-L4 entry took its references on a table frame, which is always in the frame table;
  // one naming a frame outside it took none (no validation accepts it) and is not looked up.
  PageInfo* target = frames.find(entry.mfn());
  if (target == nullptr) return;
  remove_link(*target, slot_maddr);
  put_page_and_type(frames, entry.mfn());
}

bool holds_no_references(const FrameTable& frames, uint64_t mfn) {
  return is_io_frame(frames, mfn) || is_shared_hypervisor_frame(frames, mfn);
}

}  // namespace mm
