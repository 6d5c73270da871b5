// pvhvd's loop state, shared by the files that implement it (daemon.h is the daemon's public face):
// Client (client.cpp), and Daemon, whose members are defined by concept: the loop, the link, the
// records and what the daemon holds of a domain as its backend (daemon.cpp), the relay link's
// recovery (link_recovery.cpp), the monitor, console rings and on_* actions (monitor.cpp), the
// client requests (requests.cpp), a domain's build (domain_build.cpp) and the guests' xenstore
// and PV control (guest_store.cpp).
#pragma once
#include "tools/daemon/daemon.h"

#include <sys/stat.h>
#include <unistd.h>
extern "C" {  // Debian's xenctrl.h declares C functions without extern "C" of its own
#include <xenctrl.h>
}

#include <utility>  // before Boost.Asio 1.74, which uses std::exchange without it
#include <boost/asio.hpp>
#include <cstdarg>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sstream>

#include "tools/daemon/console_ring.h"
#include "tools/daemon/domain_view.h"
#include "tools/daemon/domain_watch.h"
#include "tools/daemon/machine.h"
#include "tools/daemon/protocol.h"
#include "tools/daemon/machine_clock.h"
#include "tools/daemon/output_queue.h"
#include "tools/daemon/ptwr_mode.h"
#include "tools/daemon/state_dir.h"
#include "tools/daemon/record.h"
#include "tools/daemon/record_store.h"
#include "tools/daemon/relay_forward.h"
#include "tools/daemon/ring_page.h"
#include "tools/daemon/view_refresh.h"
#include "tools/daemon/trace_session.h"
#include "tools/daemon/xen_link.h"
#include "tools/daemon/xenstore_service.h"
#include <xenctrl_pvhv.h>
#include <pvhv_xenguest.h>

namespace pvhv::daemon::server {

namespace asio = boost::asio;
using Local = asio::local::stream_protocol;
using Reply = std::function<void(Json)>;

constexpr size_t kMaxClients = 128;

// Small helpers of the loop (daemon_util.cpp).
uint64_t steady_ms();
int64_t unix_ns();
std::string dump(const Json& j);                                          // one line, invalid UTF-8 replaced
void log(const char* format, ...) __attribute__((format(printf, 1, 2)));  // "pvhvd: ..." on stderr
std::string random_uuid();                                                // version 4, as libxl_uuid_generate
bool read_file(const std::string& path, std::vector<uint8_t>& out);

class Daemon;

// One client connection: JSON lines, one request at a time (answers in order); after `console`
// the connection carries raw bytes both ways.
class Client : public std::enable_shared_from_this<Client> {
 public:
  Client(Daemon& daemon, Local::socket socket)
      : daemon_(daemon), socket_(std::move(socket)), input_(kMaxLineBytes + 1) {}
  void start() { read_line(); }
  void send(std::string bytes);  // queued; written in order
  // A console's output: dropped, oldest first, beyond OutputQueue's bound while the client
  // does not read (it never stalls the daemon or grows without bound).
  void send_console(std::string bytes);
  void close();
  // Closes once what is queued is written (a console whose domain is gone: xl's stream ends).
  void close_when_written() {
    close_after_write_ = true;
    if (!output_.writing()) close();
  }
  bool closed() const { return closed_; }
  // Turns the connection into a console stream for `domid` (after the ok answer).
  void become_console(uint32_t domid);
  std::optional<uint32_t> console_domid() const { return console_; }
  // Turns the connection into a relay stream (after the ok answer): relay_forward.h.
  void become_relay() { relay_ = true; }

 private:
  void start_relay();
  void read_line();
  void read_raw();
  void on_line(std::string line);
  void write_next();

  Daemon& daemon_;
  Local::socket socket_;
  asio::streambuf input_;
  OutputQueue output_;
  bool closed_ = false;
  bool close_after_write_ = false;
  std::optional<uint32_t> console_;
  bool relay_ = false;
  std::array<char, 4096> raw_{};
};

struct ConsoleState {
  uint64_t mfn = 0;
  uint32_t remote_port = 0;
  uint32_t local_port = 0;  // dom0's port bound to it for the host (0: not bound)
  uint32_t handle = 0;      // the daemon's lasting mapping of the ring (ring_page.h; 0: none)
  std::string pending_input;
  std::string log_path;
  size_t log_bytes = 0;
};

struct Waiter {
  uint32_t domid;
  std::string uuid;
  bool reboot;
  Reply reply;
  uint64_t id;
};

class Daemon {
 public:
  Daemon(const DaemonOptions& options, asio::io_context& io)
      : options_(options),
        io_(io),
        pool_(4),
        acceptor_(io),
        signals_(io, SIGTERM, SIGINT),
        monitor_(io),
        refresh_(uint64_t(options.safety_poll_ms)),
        trace_(io, pool_, xen_.xch) {}

  int run();
  void handle(std::shared_ptr<Client> client, Request request, Reply reply);
  void console_input(uint32_t domid, std::string_view bytes) {
    auto it = consoles_.find(domid);
    if (it != consoles_.end() && it->second.pending_input.size() < 64 * 1024) it->second.pending_input.append(bytes);
  }
  void forget(Client* client) { clients_.erase(client); }
  void serve_relay(std::shared_ptr<Client> client, Local::socket& socket, std::string early) {
    std::weak_ptr<Client> weak = client;
    relay_.serve(client, socket, std::move(early), [weak] {
      if (auto c = weak.lock()) c->close();
    });
  }

 private:
  // A hypervisor call on the link threads, its result handed back on the loop.
  template <typename Work, typename Done>
  void on_link(Work work, Done done) {
    ++link_work_;
    asio::post(pool_, [this, work = std::move(work), done = std::move(done)]() mutable {
      auto result = work();
      asio::post(io_, [this, done = std::move(done), result = std::move(result)]() mutable {
        done(std::move(result));
        --link_work_;
        link_lost();
      });
    });
  }

  bool start_link();
  bool rebuild_view(std::string& why);
  void reconcile(const std::vector<xc_domaininfo_t>& infos);
  // The relay link (section "The relay link" below).
  bool link_lost();
  void reconnect();
  void reconnected();
  void accept();
  void schedule_monitor();
  void monitor_tick();
  void start_watch();
  void refresh_view();  // getdomaininfolist again, on VIRQ_DOM_EXC (domain_watch.h)
  void apply_view(std::vector<xc_domaininfo_t> infos, uint64_t stamp);  // a list begun at `stamp`
  void on_shutdown_state(DomainRecord& record, unsigned reason);
  void stop();

  // Requests.
  std::variant<uint32_t, Failure> resolve(const DomainRef& ref) const;
  DomainRecord* record_of(uint32_t domid);
  Json domain_json(const xc_domaininfo_t& info) const;
  void op_list(const Json& body, uint64_t id, Reply reply);
  void op_create(const Json& body, uint64_t id, Reply reply);
  void build(DomainRecord record, std::function<void(std::optional<Failure>)> done);
  void op_simple(const std::string& op, const Json& body, uint64_t id, Reply reply);
  void op_shutdown(bool reboot, const Json& body, uint64_t id, Reply reply);
  void op_console(std::shared_ptr<Client> client, const Json& body, uint64_t id, Reply reply);
  void op_ptwr_mode(const Json& body, uint64_t id, Reply reply);
  void op_vcpu_pin(const Json& body, uint64_t id, Reply reply);  // xl vcpu-pin (xen_link.h set_vcpu_affinity)
  void save(const DomainRecord& record);
  // The record goes, and with it what the daemon held of the domain (release_backends); `then`
  // on the loop once that is given back.
  void drop(const std::string& uuid, const char* why, std::function<void()> then = {});
  // The domain's console and xenstore rings let go: unmapped, dom0's ports to them closed, on a
  // link thread; then, on the loop, the view read again (a destroyed domain the mappings held is
  // gone only now, and no VIRQ_DOM_EXC says so; a shutdown -w waiter held back while the on_*
  // action ran is answered) and `then`.
  void release_backends(uint32_t domid, std::function<void()> then = {});
  void let_go(std::vector<uint32_t> ports, std::vector<uint32_t> handles, std::function<void()> then);
  ConsoleState new_console(const std::string& name, uint64_t mfn, uint32_t remote_port, uint32_t local_port,
                           uint32_t handle) const;
  void append_console(uint32_t domid, const std::string& bytes);
  // xenstore (the section "xenstore" below; the service is xenstore_service.h)
  using AskDone = std::function<void(std::optional<Failure>, int libxl_rc, bool fell_back)>;
  void start_xenstore();
  std::optional<Failure> introduce(xenstore::DomainSpec spec, StoreRing ring, const Json* saved);
  void ask_guest(uint32_t domid, bool reboot, bool fallback, AskDone done);

  DaemonOptions options_;
  asio::io_context& io_;
  asio::thread_pool pool_;
  Local::acceptor acceptor_;
  asio::signal_set signals_;
  asio::steady_timer monitor_;
  ViewRefresh refresh_;
  DomainWatch watch_;
  Xen xen_;
  RelayForwarder relay_{io_, pool_, xen_.xch, [](const std::string& m) { log("%s", m.c_str()); }};
  Machine machine_;
  VersionInfo version_;
  int64_t started_ns_ = unix_ns();
  std::map<std::string, DomainRecord> records_;  // by uuid
  std::set<std::string> names_reserved_;         // creates under way
  DomainView view_;                              // the last getdomaininfolist, and what the daemon created since
  std::map<uint32_t, ConsoleState> consoles_;    // by domid
  std::map<Client*, std::weak_ptr<Client>> clients_;
  std::vector<Waiter> waiters_;
  std::set<std::string> acting_;  // uuids whose on_* action is under way
  XenstoreService xenstore_;
  bool stopping_ = false;
  bool tick_running_ = false;  // a monitor tick's link work is under way
  // The relay link: down (every client request that needs it is EAGAIN) until reconnected.
  bool link_down_ = false;
  int link_attempts_ = 0;
  uint64_t link_down_at_ms_ = 0;
  size_t link_work_ = 0;  // on_link work in flight (a reconnect waits for it to end)
  asio::steady_timer link_timer_{io_};
  TraceRecorder trace_;  // xl trace start|stop (trace_session.h)
};

}  // namespace pvhv::daemon::server
