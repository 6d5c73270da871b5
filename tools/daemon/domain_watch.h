// pvhvd's watch on VIRQ_DOM_EXC: dom0's port for it bound for the host through libxenctrl, and a
// thread of its own waiting for its events (pvhv_xc_evtchn_pending, which steps aside for the
// link threads' requests). Each event is unmasked, then reported: an exception that comes after
// the unmask raises the event again, one during the report is covered by the read it causes.
#pragma once
extern "C" {
#include <xenctrl.h>
}

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>

namespace pvhv::daemon {

class DomainWatch {
 public:
  DomainWatch() = default;
  DomainWatch(const DomainWatch&) = delete;
  DomainWatch& operator=(const DomainWatch&) = delete;
  ~DomainWatch() { stop(); }

  // Binds VIRQ_DOM_EXC on `xch` and starts the thread; `on_exception` is called on it for each
  // event. The port is unmasked again after `rearm_ms` without events (an EVENT frame lost on
  // the link leaves it masked). False (and `why`) when the VIRQ cannot be bound.
  // Events on the host's other ports go to `on_other` (a relay client's: relay_forward.h).
  bool start(xc_interface* xch, uint64_t rearm_ms, std::function<void()> on_exception,
             std::function<void(uint32_t)> on_other, std::string& why);
  // Ends the thread (within its wait turn, 200 ms) and closes the port.
  void stop();
  uint32_t port() const { return port_; }
  uint64_t events() const { return events_; }

 private:
  void run();

  xc_interface* xch_ = nullptr;
  std::function<void()> on_exception_;
  std::function<void(uint32_t)> on_other_;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> events_{0};
  uint32_t port_ = 0;
  uint64_t rearm_ms_ = 10000;
};

}  // namespace pvhv::daemon
