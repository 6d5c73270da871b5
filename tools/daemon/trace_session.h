// `xl trace start FILE` / `xl trace stop` (tools/PROTOCOL.md): pvhvd records a live xentrace file
// of the running machine the way Xen's xentrace does it, but from the host: the trace buffers
// enabled with XEN_SYSCTL_tbuf_op, t_info and each CPU's ring read through the relay
// (pvhv_xc_foreign_read of DOMID_XEN frames: Xen's tools map them), the whole records copied out
// with trace/format/ring.h's consumer, the ring's cons written back, and each window written
// with trace/capture/trace_writer.h's TRC_TRACE_CPU_CHANGE framing (our xenalyze and Xen's read
// it). A drain runs every 50 ms on a link thread while recording; stop drains once more,
// disables the buffers and answers the records written and lost.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>  // before Boost.Asio, which uses std::exchange

#include <boost/asio.hpp>

#include "tools/daemon/protocol.h"

struct xc_interface_core;

namespace pvhv::daemon {

class TraceSession;

class TraceRecorder {
 public:
  using Reply = std::function<void(Json)>;
  // `xch`: the daemon's handle (the reference is read when a request comes).
  TraceRecorder(boost::asio::io_context& io, boost::asio::thread_pool& pool, xc_interface_core*& xch);
  ~TraceRecorder();

  void start(const Json& body, uint64_t id, Reply reply);  // `trace_start`
  void stop(uint64_t id, Reply reply);                     // `trace_stop`
  void finish();                                           // the daemon stops: ends a recording (no answer)

 private:
  void schedule_drain();
  void after_drain();

  boost::asio::io_context& io_;
  boost::asio::thread_pool& pool_;
  xc_interface_core*& xch_;
  boost::asio::steady_timer timer_;
  std::shared_ptr<TraceSession> session_;  // null: not recording
  bool starting_ = false;
  bool draining_ = false;
  std::function<void()> after_drain_;  // a stop waiting for the drain under way
};

}  // namespace pvhv::daemon
