// xc_version: XENVER_* with its argument bounced out (in and out for build_id), as Xen's
// xc_private.c does; an unknown command is -EINVAL without a hypercall, as there.
#include <cerrno>

#include "tools/libxc/xc_private.h"
// After xenctrl.h (through xc_private.h), which sets the public headers up for the tools.
#include "common/xen/version_argument.h"

using namespace pvhv::xc;

namespace {
// What XENVER_* writes at its argument; -1 for a command the library does not know.
long version_argument_bytes(int cmd, const void* arg) {
  const int64_t bytes = pvhv::xen_abi::version_argument_bytes(uint64_t(cmd));
  if (bytes != pvhv::xen_abi::kVersionBuildId) return long(bytes);
  return long(sizeof(xen_build_id_t) + static_cast<const xen_build_id_t*>(arg)->len);
}
}  // namespace

int xc_version(xc_interface* xch, int cmd, void* arg) {
  long size = version_argument_bytes(cmd, arg);
  if (size < 0) {
    error(xch, "xc_version: unknown command %d", cmd);
    return -EINVAL;
  }
  Bounce bounce(xch, arg, size_t(size), cmd == XENVER_build_id ? Bounce::both : Bounce::out);
  if (size != 0 && bounce.prepare() < 0) {
    perror(xch, "Could not bounce buffer for version hypercall");
    return -ENOMEM;
  }
  long rc = hypercall(xch, __HYPERVISOR_xen_version, uint64_t(cmd), bounce.address());
  int saved = errno;
  if (size != 0 && bounce.finish() < 0 && rc >= 0) return -1;
  errno = saved;
  return int(rc);
}
