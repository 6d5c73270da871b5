// Pure: XEN_DOMCTL_destroydomain's state machine, Xen 4.17's domain_kill (xen/common/domain.c)
// with domain_relinquish_resources' steps for a PV domain. A domain is alive, then dying while
// its resources are given back, then dead (XEN_DOMINF_dying is reported only then, as Xen's
// getdomaininfo does). The work is cut into pieces; between pieces the hypercall may stop and
// be continued (Xen's -ERESTART), the progress kept here, so destroydomain never holds the CPU
// for long and a continued call picks up where the last one stopped.
#pragma once
#include <stdint.h>

namespace control {
enum class Dying : uint8_t { alive, dying, dead };  // Xen's DOMDYING_*

// The steps, in the order Xen takes them for a PV domain.
enum class TeardownStep : uint8_t {
  vcpu_state,      // timers stopped, writable-pagetable slots reattached and freed, the vCPU
                   // base pointers (CR3s: vcpu_destroy_pagetables) released, vCPU down
  event_channels,  // every port closed (evtchn_destroy)
  unpin_tables,    // visits [first, end) of its page list: each pinned table unpinned
  release_frames,  // visits [first, end): each allocation reference dropped (relinquish_memory)
  shared_info,     // the shared_info frame given back
  done,
};

// A scan step visits the domain's own frames (its page list, as long as it was when the step
// began: `length`), a piece at a time; visits [first, end) are this piece's.
struct TeardownWork {
  TeardownStep step = TeardownStep::done;
  uint64_t first = 0, end = 0;  // the visits of a scan step
  uint64_t length = 0;          // the scan's length, fixed when its first piece is given
};

class DomainTeardown {
 public:
  // Frames per piece of a scan: small enough that a piece is short, large enough that the
  // preemption check between pieces costs nothing.
  static constexpr uint64_t frames_per_piece = 2048;

  Dying state() const { return state_; }
  bool alive() const { return state_ == Dying::alive; }

  // domain_kill's first answer: -EINVAL on the caller's own domain (it cannot pause itself);
  // otherwise the domain is dying from now on (idempotent) and 0.
  long begin(bool target_is_caller);
  // The next piece of work for a domain holding `domain_frames` frames now (what a scan step
  // that has not begun will visit), or step done when every piece has been done (the domain
  // is then dead, and stays so).
  TeardownWork next(uint64_t domain_frames) const;
  // The piece `next` gave was carried out.
  void finished(const TeardownWork& work);

 private:
  Dying state_ = Dying::alive;
  TeardownStep step_ = TeardownStep::vcpu_state;
  uint64_t cursor_ = 0;  // first visit not yet made in a scan step
  uint64_t length_ = 0;  // the scan step's length, once its first piece is done
  bool scan_begun_ = false;
};
}  // namespace control
