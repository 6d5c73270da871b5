#include "console/output_limit.h"

namespace console {
bool OutputLimit::take(uint64_t now_ns, uint64_t units) {
  if (now_ns > last_ns_) {
    uint64_t earned = now_ns - last_ns_;
    credit_ns_ = ceiling_ns_ - credit_ns_ < earned ? ceiling_ns_ : credit_ns_ + earned;
    last_ns_ = now_ns;
  }
  // units * cost without overflow: more than the ceiling's worth never fits.
  bool fits = units <= ceiling_ns_ / cost_ns_ && units * cost_ns_ <= credit_ns_;
  if (fits)
    credit_ns_ -= units * cost_ns_;
  else
    dropped_ += units;
  return fits;
}

uint64_t OutputLimit::take_dropped() {
  uint64_t dropped = dropped_;
  dropped_ = 0;
  return dropped;
}
}  // namespace console
