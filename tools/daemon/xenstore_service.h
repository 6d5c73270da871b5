// pvhvd's xenstore (xenstored's role): one store for the machine (tools/xenstore), each domU's
// ring served through the relay (reads and writes of the ring page through the daemon's lasting
// mapping of it, ring_page.h; notifies of the domain's store port), the guest's own state kept in its record so a
// restarted daemon takes its rings over (tools/README.md "The daemon", "xenstore").
//
// Threads: the rings are served on a link thread (every page access is a relay request), the
// daemon writes nodes on its loop; one mutex around the store is the whole arrangement (the
// store's work per round is small: at most a ring's worth of requests per domain).
// The library gives no way to wait for an event channel's notification, so the rings are
// polled: every kPollMs, 16 bytes of each page (the four indices) say whether it has work.
#pragma once
extern "C" {  // Debian's xenctrl.h declares C functions without extern "C" of its own
#include <xenctrl.h>
}

#include <utility>  // before Boost.Asio 1.74, which uses std::exchange without it
#include <boost/asio.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "tools/daemon/protocol.h"
#include "tools/daemon/ring_page.h"
#include "tools/daemon/store_state.h"
#include "tools/xenstore/xenstore.h"

namespace pvhv::daemon {

// A domain's ring as the builder set it up, dom0's port bound to its store port, and the
// daemon's lasting mapping of the page (ring_page.h; 0: none).
struct StoreRing {
  uint32_t domid = 0;
  uint64_t mfn = 0;
  uint32_t remote_port = 0;
  uint32_t local_port = 0;
  uint32_t handle = 0;
  RingPage page() const { return {domid, mfn, handle}; }
};

// What a guest's xenstore connection did that its log should say (a broken ring, errors).
struct StoreIncident {
  uint32_t domid = 0;
  std::string text;
};

class XenstoreService {
 public:
  static constexpr int kPollMs = 50;
  static constexpr int kAckTimeoutMs = 60 * 1000;  // libxl's wait for control/shutdown's ack
  using IncidentHandler = std::function<void(StoreIncident)>;
  using StateHandler = std::function<void(uint32_t domid, Json state)>;

  XenstoreService();
  ~XenstoreService();

  // How often the rings are polled (kPollMs; pvhvd --xenstore-poll-ms: a bench keeps it quiet).
  void set_poll_ms(int ms) { poll_ms_ = ms; }

  // Polling starts; incidents and changed guest states are handed over on `io`'s thread.
  void start(boost::asio::io_context& io, boost::asio::thread_pool& pool, xc_interface* xch,
             IncidentHandler on_incident, StateHandler on_state);
  void stop();

  // libxl's nodes for the domain, INTRODUCE with its ring, the ring served from then on.
  // `saved` (a restarted daemon): the guest's state its record kept, and the ring taken over
  // at the indices its page shows. 0 or an errno.
  int add_domain(const xenstore::DomainSpec& spec, const StoreRing& ring, const Json* saved = nullptr);
  // RELEASE (@releaseDomain fires), /local/domain/N and /vm/<uuid> removed. The ring, if the
  // domain was served: its dom0 port to close and its mapping to release.
  std::optional<StoreRing> remove_domain(uint32_t domid);
  bool serves(uint32_t domid) const;
  // After the relay link's reconnect: the domain's ring goes on as it was (the store, its
  // connection, watches and answers in memory), through dom0's new port bound to it and the
  // new session's mapping of it.
  void rebind(uint32_t domid, uint32_t local_port, uint32_t handle);
  // The domain shut down or crashed (the domain list after VIRQ_DOM_EXC says so): @releaseDomain
  // fires once for it (xenstore.h Store::domain_shut_down).
  void domain_shut_down(uint32_t domid);
  std::vector<uint32_t> served() const;

  int write(const std::string& path, const std::string& value);
  std::optional<std::string> read(const std::string& path) const;

  // The socket ops xenstore_read / xenstore_write / xenstore_ls (tools/PROTOCOL.md), as dom0
  // (every client of the 0600 socket is dom0's toolstack): the answer.
  Json client_op(const std::string& op, const Json& body, uint64_t id);

  // Calls `done(true)` once `path` is empty or gone (the guest's acknowledgement of a control
  // request), `done(false)` after kAckTimeoutMs. On the loop.
  void await_ack(const std::string& path, std::function<void(bool)> done);

 private:
  struct Domain;
  struct Ack {
    std::string path;
    std::chrono::steady_clock::time_point until;
    std::function<void(bool)> done;
  };
  void schedule();
  std::vector<StoreIncident> poll(xc_interface* xch);  // a link thread
  void after_poll();                                   // the loop

  mutable std::mutex mutex_;  // the store and domains_
  xenstore::Store store_;
  xenstore::ConnId dom0_;
  std::map<uint32_t, std::unique_ptr<Domain>> domains_;

  // The loop's own.
  boost::asio::io_context* io_ = nullptr;
  boost::asio::thread_pool* pool_ = nullptr;
  xc_interface* xch_ = nullptr;
  std::unique_ptr<boost::asio::steady_timer> timer_;
  IncidentHandler on_incident_;
  StateHandler on_state_;
  std::vector<Ack> acks_;
  bool stopped_ = false;
  int poll_ms_ = kPollMs;
};

}  // namespace pvhv::daemon
