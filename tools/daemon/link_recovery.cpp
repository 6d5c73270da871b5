// pvhvd's relay link going down and coming back (server.h).
#include "tools/daemon/server.h"

namespace pvhv::daemon::server {

// ---- the relay link ----
//
// The library marks the link down when it breaks (pvhv_xc_link_keep: the socket closed, a read
// or write failed, a request unanswered for --link-timeout-ms); the loop notices after any link
// work and at each monitor tick, says so once, and reconnects with a backoff: the link work
// still in flight fails at once (EAGAIN) and ends first, then on a link thread the watch ends,
// a frame cut on the serial link is completed as at --attach, and the session is opened again;
// back on the loop the view is rebuilt as at --attach (rebuild_view: ports bound again, the
// store's rings rebound, half-built domains destroyed), the watch started again, and the list
// read, so an on_* action whose exception came meanwhile is applied.

bool Daemon::link_lost() {
  if (link_down_) return true;
  if (stopping_) return false;
  int error = pvhv_xc_link_down(xen_.xch, nullptr);
  if (!error) return false;
  link_down_ = true;
  link_attempts_ = 0;
  link_down_at_ms_ = steady_ms();
  log("relay link down: %s; reconnecting (requests that need it answer EAGAIN meanwhile)", std::strerror(error));
  relay_.drop_all("the relay link dropped");
  reconnect();
  return true;
}

void Daemon::reconnect() {
  int delay_ms = std::min(5000, 200 << std::min(link_attempts_, 5));  // 0.2 s, 0.4 s ... 5 s
  link_timer_.expires_after(std::chrono::milliseconds(delay_ms));
  link_timer_.async_wait([this](boost::system::error_code error) {
    if (error || stopping_) return;
    if (link_work_ > 0) return reconnect();  // it fails at once now: let it end first
    ++link_attempts_;
    asio::post(pool_, [this] {
      watch_.stop();  // its thread has ended already (the link's errno): joined
      if (machine_.window.empty())
        complete_partial_frame(machine_.relay_socket);
      else
        complete_partial_frame_in_window(machine_.window);
      int rc = pvhv_xc_link_reopen(xen_.xch, 5000);
      int failure = errno;
      asio::post(io_, [this, rc, failure] {
        if (stopping_) return;
        if (rc == 0) return reconnected();
        if (link_attempts_ == 1 || link_attempts_ % 10 == 0)
          log("relay link: attempt %d to reconnect failed: %s", link_attempts_, std::strerror(failure));
        reconnect();
      });
    });
  });
}

void Daemon::reconnected() {
  std::string why;
  if (!rebuild_view(why)) {
    log("relay link: reconnected, but %s: again", why.c_str());
    return reconnect();
  }
  uint64_t generation = 0;
  pvhv_xc_link_down(xen_.xch, &generation);
  link_down_ = false;
  log("relay link back after %.1f s (session %llu, attempt %d): %zu domains on record",
      double(steady_ms() - link_down_at_ms_) / 1000.0, (unsigned long long)generation, link_attempts_, records_.size());
  start_watch();
  refresh_view();  // the list now: exceptions that came while the link was down
}

}  // namespace pvhv::daemon::server
