// When pvhvd reads the domain list again (pure, unit-tested: tests/unit/daemon_view_refresh_test.cpp).
//
// The hypervisor tells dom0 of every domain exception with VIRQ_DOM_EXC (a domain shut down,
// crashed or died), as Xen tells xl's monitor; pvhvd reads getdomaininfolist after each, and
// otherwise only at a slow safety interval. One read at a time: an exception during a read makes
// another read follow it, so none is lost (the read that follows starts after the exception).
// Without the VIRQ (it could not be bound), every monitor tick reads: the poll it replaces.
#pragma once
#include <cstdint>

namespace pvhv::daemon {

class ViewRefresh {
 public:
  explicit ViewRefresh(uint64_t safety_ms) : safety_ms_(safety_ms) {}

  void set_watching(bool watching) { watching_ = watching; }
  bool watching() const { return watching_; }
  // VIRQ_DOM_EXC came (or the view is stale for another reason).
  void exception() { stale_ = true; }
  // Whether to start a read now (a monitor tick or an exception asks).
  bool due(uint64_t now_ms) const {
    if (in_flight_) return false;
    return stale_ || !watching_ || !read_once_ || now_ms - last_start_ms_ >= safety_ms_;
  }
  // A read starts: what it will see covers every exception before this point.
  void begin(uint64_t now_ms) {
    in_flight_ = true;
    stale_ = false;
    read_once_ = true;
    last_start_ms_ = now_ms;
  }
  void end() { in_flight_ = false; }
  bool in_flight() const { return in_flight_; }
  bool stale() const { return stale_; }  // an exception no read has covered yet

 private:
  uint64_t safety_ms_;
  uint64_t last_start_ms_ = 0;
  bool watching_ = false;
  bool stale_ = false;
  bool in_flight_ = false;
  bool read_once_ = false;
};

}  // namespace pvhv::daemon
