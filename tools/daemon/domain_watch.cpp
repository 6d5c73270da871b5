#include "tools/daemon/domain_watch.h"

#include <xenctrl_pvhv.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace pvhv::daemon {

bool DomainWatch::start(xc_interface* xch, uint64_t rearm_ms, std::function<void()> on_exception,
                        std::function<void(uint32_t)> on_other, std::string& why) {
  on_other_ = std::move(on_other);
  rearm_ms_ = rearm_ms;
  xch_ = xch;
  on_exception_ = std::move(on_exception);
  if (pvhv_xc_evtchn_bind_virq(xch_, VIRQ_DOM_EXC, &port_) != 0) {
    why = std::string("cannot bind VIRQ_DOM_EXC: ") + std::strerror(errno);
    return false;
  }
  stopping_ = false;
  thread_ = std::thread([this] { run(); });
  return true;
}

void DomainWatch::stop() {
  if (!thread_.joinable()) return;
  stopping_ = true;
  thread_.join();
  pvhv_xc_evtchn_close(xch_, port_);  // fails harmlessly once dom0 is shutting down
}

void DomainWatch::run() {
  using Clock = std::chrono::steady_clock;
  auto last_unmask = Clock::now();
  while (!stopping_) {
    uint32_t port = 0;
    if (pvhv_xc_evtchn_pending(xch_, 200, &port) != 0) {
      // An EVENT frame damaged on the serial link is lost, and its port stays masked: unmasked
      // again now and then, so the next exception is heard (the safety read covers the lost one).
      if (Clock::now() - last_unmask >= std::chrono::milliseconds(rearm_ms_)) {
        pvhv_xc_evtchn_unmask(xch_, port_);
        last_unmask = Clock::now();
      }
      if (errno == ETIMEDOUT) continue;
      // dom0 or the machine went away, or the link dropped (the daemon reconnects, then starts
      // the watch again: link_recovery.cpp).
      if (errno == ESHUTDOWN || errno == ECONNRESET || errno == EAGAIN || errno == EPIPE) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the link's trouble: try again
      continue;
    }
    // Other host ports: a relay client's (it unmasks its own), or a console's (they stay masked,
    // as they always were: their rings are drained by the monitor's tick, not by events).
    if (port != port_) {
      if (on_other_) on_other_(port);
      continue;
    }
    ++events_;
    pvhv_xc_evtchn_unmask(xch_, port_);
    last_unmask = Clock::now();
    on_exception_();
  }
}

}  // namespace pvhv::daemon
