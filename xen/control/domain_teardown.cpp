#include "control/domain_teardown.h"
#include "abi/xen_abi.h"

namespace control {
namespace {
bool is_scan(TeardownStep step) { return step == TeardownStep::unpin_tables || step == TeardownStep::release_frames; }
TeardownStep after(TeardownStep step) { return TeardownStep(uint8_t(step) + 1); }
}  // namespace

long DomainTeardown::begin(bool target_is_caller) {
  if (target_is_caller) return -XEN_EINVAL;
  if (state_ == Dying::alive) state_ = Dying::dying;
  return 0;
}

TeardownWork DomainTeardown::next(uint64_t domain_frames) const {
  if (state_ != Dying::dying) return TeardownWork{};
  TeardownWork work{step_, 0, 0, 0};
  if (is_scan(step_)) {
    // Fixed at the step's start: visits free frames, so the count shrinks as it goes.
    work.length = scan_begun_ ? length_ : domain_frames;
    work.first = cursor_ < work.length ? cursor_ : work.length;
    uint64_t left = work.length - work.first;
    work.end = work.first + (left < frames_per_piece ? left : frames_per_piece);
  }
  return work;
}

void DomainTeardown::finished(const TeardownWork& work) {
  if (state_ != Dying::dying || work.step != step_) return;  // stale: not the piece asked for
  if (is_scan(step_) && work.end > work.first) {
    cursor_ = work.end;
    length_ = work.length;
    scan_begun_ = true;
    return;  // the same step goes on with the next piece (an empty piece ends it)
  }
  step_ = after(step_);
  cursor_ = 0;
  length_ = 0;
  scan_begun_ = false;
  if (step_ == TeardownStep::done) state_ = Dying::dead;
}
}  // namespace control
