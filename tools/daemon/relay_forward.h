// pvhvd's `relay` op (tools/PROTOCOL.md): libxenctrl clients with PVHV_XENCTRL=daemon:<socket>
// speak the relay protocol to the daemon, which forwards their requests on its own session
// (relay_rules.h says which and how), one at a time per client, on the link threads; answers
// go back under the client's numbers, and events on a client's ports to that client. A client
// that sends garbage, an oversized frame, or names what is not its own is dropped; whatever a
// client held (buffers, ports, lasting mappings) is released when it goes, and an answer that comes after it went
// is dropped (what it granted released too).
#pragma once
#include <utility>  // before Boost.Asio 1.74, which uses std::exchange without it
#include <boost/asio.hpp>

extern "C" {
#include <xenctrl.h>
}

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

namespace pvhv::daemon {

class RelaySession;

class RelayForwarder {
 public:
  using Socket = boost::asio::local::stream_protocol::socket;
  using Log = std::function<void(const std::string&)>;
  RelayForwarder(boost::asio::io_context& io, boost::asio::thread_pool& pool, xc_interface*& xch, Log log)
      : io_(io), pool_(pool), xch_(xch), log_(std::move(log)) {}

  // The client's connection once its `relay` op is answered; `early`: bytes it sent behind the
  // line. `keepalive` holds the connection's owner; `close` ends it.
  void serve(std::shared_ptr<void> keepalive, Socket& socket, std::string early, std::function<void()> close);
  // On the loop: an event on dom0's `port` (the link's EVENT): to the client that bound it.
  // False when no client holds the port.
  bool on_event(uint32_t port);
  size_t sessions() const { return sessions_.size(); }
  // The daemon's relay link dropped: every client is dropped (its session's buffers and ports
  // went with the link's, so nothing is released on the new one).
  void drop_all(const std::string& why);

 private:
  friend class RelaySession;
  boost::asio::io_context& io_;
  boost::asio::thread_pool& pool_;
  xc_interface*& xch_;
  Log log_;
  std::map<RelaySession*, std::weak_ptr<RelaySession>> sessions_;
  uint64_t next_client_ = 1;
};

}  // namespace pvhv::daemon
