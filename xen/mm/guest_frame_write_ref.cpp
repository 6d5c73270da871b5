#include "mm/guest_frame_write_ref.h"

#include "mm/error.h"
#include "mm/page_refs.h"

namespace mm {

int take_guest_frame_write_ref(MmuContext& context, GuestFrameWriteRef& ref, uint64_t mfn, domid_t owner) {
  if (ref.held) return error(XEN_EINVAL);
  if (get_page_and_type(context, mfn, owner, PageType::Writable) != 0) return error(XEN_EINVAL);
  ref = GuestFrameWriteRef{mfn, true};
  return 0;
}

void release_guest_frame_write_ref(FrameTable& frames, GuestFrameWriteRef& ref) {
  if (!ref.held) return;
  const uint64_t mfn = ref.mfn;
  ref = GuestFrameWriteRef{};
  put_page_and_type(frames, mfn);
}

}  // namespace mm
