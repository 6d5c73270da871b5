// Pure: the toolstack's pause count of a domain (Xen's controller_pause_count). Pauses by the
// control domain nest: the domain runs again only after as many unpauses as pauses. Xen caps
// the count at 255 so repeated pauses cannot overflow its internal count (-EOVERFLOW), and an
// unpause without a pause is -EINVAL.
#pragma once
#include <stdint.h>

namespace control {
class ControllerPauseCount {
 public:
  static constexpr unsigned limit = 255;

  long pause();    // 0, or -EOVERFLOW at the limit (the count is unchanged)
  long unpause();  // 0, or -EINVAL when not paused
  bool paused() const { return count_ > 0; }
  unsigned count() const { return count_; }

 private:
  unsigned count_ = 0;
};
}  // namespace control
