// A domU's ring page through the daemon's lasting mapping of it (ring_page.h).
#include "tools/daemon/ring_page.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <xenctrl_pvhv.h>

namespace pvhv::daemon {

bool RingPage::read(xc_interface* xch, uint32_t offset, void* out, size_t length) const {
  if (handle) return pvhv_xc_mapped_read(xch, handle, offset, out, length) == 0;
  return pvhv_xc_foreign_read(xch, domid, mfn, offset, out, length) == 0;
}

bool RingPage::write(xc_interface* xch, uint32_t offset, const void* data, size_t length) const {
  if (handle) return pvhv_xc_mapped_write(xch, handle, offset, data, length) == 0;
  return pvhv_xc_foreign_write(xch, domid, mfn, offset, data, length) == 0;
}

uint32_t hold_ring(xc_interface* xch, uint32_t domid, uint64_t mfn, std::string& why) {
  uint32_t handle = 0;
  if (pvhv_xc_foreign_map(xch, domid, mfn, &handle) == 0) return handle;
  char text[160];
  std::snprintf(text, sizeof text, "mapping d%u's ring (frame %#llx): %s", domid, (unsigned long long)mfn,
                std::strerror(errno));
  why = text;
  return 0;
}

void release_ring(xc_interface* xch, uint32_t handle) {
  if (handle) pvhv_xc_foreign_unmap(xch, handle);
}

}  // namespace pvhv::daemon
