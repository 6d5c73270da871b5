#include "control/pause_count.h"
#include "abi/xen_abi.h"

namespace control {
long ControllerPauseCount::pause() {
  if (count_ >= limit) return -XEN_EOVERFLOW;
  ++count_;
  return 0;
}

long ControllerPauseCount::unpause() {
  if (count_ == 0) return -XEN_EINVAL;
  --count_;
  return 0;
}
}  // namespace control
