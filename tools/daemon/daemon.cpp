// pvhvd's event loop, clients and domain management (daemon.h).
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
#include "tools/daemon/view_refresh.h"
#include "tools/daemon/trace_session.h"
#include "tools/daemon/xen_link.h"
#include "tools/daemon/xenstore_service.h"
#include <xenctrl_pvhv.h>
#include <pvhv_xenguest.h>

namespace pvhv::daemon {
namespace {

namespace asio = boost::asio;
using Local = asio::local::stream_protocol;
using Reply = std::function<void(Json)>;

constexpr size_t kMaxClients = 128;

uint64_t steady_ms() {
  using namespace std::chrono;
  return uint64_t(duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count());
}

int64_t unix_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

void log(const char* format, ...) __attribute__((format(printf, 1, 2)));
void log(const char* format, ...) {
  va_list args;
  va_start(args, format);
  std::fprintf(stderr, "pvhvd: ");
  std::vfprintf(stderr, format, args);
  std::fprintf(stderr, "\n");
  va_end(args);
}

std::string random_uuid() {
  std::random_device device;
  std::array<uint8_t, 16> bytes{};
  for (auto& b : bytes) b = uint8_t(device());
  bytes[6] = uint8_t((bytes[6] & 0x0f) | 0x40);  // version 4, as libxl_uuid_generate
  bytes[8] = uint8_t((bytes[8] & 0x3f) | 0x80);
  return format_uuid(bytes);
}

bool read_file(const std::string& path, std::vector<uint8_t>& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return true;
}

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
  void save(const DomainRecord& record);
  void drop(const std::string& uuid, const char* why);
  void append_console(uint32_t domid, const std::string& bytes);
  // xenstore (the section "xenstore" below; the service is xenstore_service.h)
  using AskDone = std::function<void(std::optional<Failure>, int libxl_rc, bool fell_back)>;
  void start_xenstore();
  std::optional<Failure> introduce(xenstore::DomainSpec spec, StoreRing ring, const Json* saved);
  void release(uint32_t domid);
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

// ---- Client ----

void Client::send(std::string bytes) {
  if (closed_) return;
  output_.push(std::move(bytes), false);
  if (!output_.writing()) write_next();
}

void Client::send_console(std::string bytes) {
  if (closed_) return;
  output_.push(std::move(bytes), true);
  if (!output_.writing()) write_next();
}

void Client::write_next() {
  if (output_.empty() || closed_) {
    if (close_after_write_) close();
    return;
  }
  auto self = shared_from_this();
  asio::async_write(socket_, asio::buffer(output_.begin_write()), [self](boost::system::error_code error, size_t) {
    if (error) return self->close();
    self->output_.end_write();
    self->write_next();
  });
}

void Client::close() {
  if (closed_) return;
  closed_ = true;
  boost::system::error_code ignored;
  socket_.close(ignored);
  daemon_.forget(this);
}

void Client::read_line() {
  if (closed_) return;
  auto self = shared_from_this();
  asio::async_read_until(socket_, input_, '\n', [self](boost::system::error_code error, size_t length) {
    if (error == asio::error::not_found) {  // a line over 1 MiB: answered, then the client is dropped
      self->send(dump(error_answer(nullptr, {kE2big, "request longer than 1 MiB"})) + "\n");
      self->close_after_write_ = true;
      if (!self->output_.writing()) self->close();
      return;
    }
    if (error) return self->close();
    std::string line(asio::buffers_begin(self->input_.data()), asio::buffers_begin(self->input_.data()) + length - 1);
    self->input_.consume(length);
    self->on_line(std::move(line));
  });
}

void Client::on_line(std::string line) {
  auto parsed = parse_request(line);
  if (auto* answer = std::get_if<Json>(&parsed)) {
    send(dump(*answer) + "\n");
    return read_line();
  }
  auto self = shared_from_this();
  daemon_.handle(self, std::move(std::get<Request>(parsed)), [self](Json answer) {
    self->send(dump(answer) + "\n");
    if (self->console_) return self->read_raw();
    if (self->relay_) return self->start_relay();
    self->read_line();
  });
}

void Client::become_console(uint32_t domid) { console_ = domid; }

void Client::start_relay() {
  std::string early(asio::buffers_begin(input_.data()), asio::buffers_end(input_.data()));
  input_.consume(input_.size());
  daemon_.serve_relay(shared_from_this(), socket_, std::move(early));
}

void Client::read_raw() {
  if (closed_) return;
  if (input_.size()) {  // bytes the client sent right behind its console request
    std::string early(asio::buffers_begin(input_.data()), asio::buffers_end(input_.data()));
    input_.consume(input_.size());
    daemon_.console_input(*console_, early);
  }
  auto self = shared_from_this();
  socket_.async_read_some(asio::buffer(raw_), [self](boost::system::error_code error, size_t n) {
    if (error) return self->close();
    self->daemon_.console_input(*self->console_, std::string_view(self->raw_.data(), n));
    self->read_raw();
  });
}

// ---- Daemon ----

int Daemon::run() {
  if (auto refused = prepare_state_dir(options_.state_dir, geteuid())) {
    log("%s", refused->c_str());
    return 1;
  }
  if (!start_link()) return 1;
  start_xenstore();
  // The client socket appears only once the view is rebuilt: a client never sees a half view.
  std::string path = options_.state_dir + "/pvhvd.sock";
  unlink(path.c_str());
  mode_t old_mask = umask(0177);  // created 0600: only the daemon's user reaches the machine
  boost::system::error_code error;
  acceptor_.open(Local(), error);
  if (!error) acceptor_.bind(Local::endpoint(path), error);
  if (!error) acceptor_.listen(asio::socket_base::max_listen_connections, error);
  umask(old_mask);
  if (error) {
    log("%s: %s", path.c_str(), error.message().c_str());
    return 1;
  }
  chmod(path.c_str(), 0600);
  signals_.async_wait([this](boost::system::error_code, int) { stop(); });
  accept();
  start_watch();
  schedule_monitor();
  log("serving on %s (%s %s, %zu domains on record)", path.c_str(), version_.hypervisor.c_str(),
      version_.version.c_str(), records_.size());
  io_.run();
  pool_.join();
  return 0;
}

bool Daemon::start_link() {
  std::string why;
  if (options_.attach_socket.empty()) {
    MachineOptions machine{options_.state_dir,  options_.build_dir, options_.source_dir,
                           options_.hypervisor, options_.ptwr_mode, options_.memory};
    auto started = start_machine(machine, why);
    if (!started) {
      log("cannot start the machine: %s", why.c_str());
      return false;
    }
    machine_ = *started;
    log("machine started: QEMU pid %d, %s, serial %s", machine_.qemu_pid, options_.hypervisor.c_str(),
        machine_.serial_log.c_str());
  } else {
    machine_ = attached_machine(options_.state_dir, options_.attach_socket);
    log("attaching to %s (QEMU pid %d)", machine_.relay_socket.c_str(), machine_.qemu_pid);
    // A frame the killed daemon was sending is completed on each path, so the session goes
    // on the bulk window as the first daemon's did.
    complete_partial_frame(machine_.relay_socket);
    if (!machine_.window.empty()) complete_partial_frame_in_window(machine_.window);
  }
  if (!options_.link_via.empty()) {
    machine_.relay_socket = options_.link_via;
    machine_.window.clear();
  }
  if (!open_link(xen_, machine_.relay_socket, machine_.window, options_.open_timeout_ms, options_.link_timeout_ms,
                 why)) {
    log("%s", why.c_str());
    if (machine_.our_child) stop_machine(machine_, 0);
    return false;
  }
  log("relay session: %s", pvhv_xc_transport(xen_.xch));  // "(window FILE)": the bulk window carries it
  version_ = version_info(xen_);
  if (!rebuild_view(why)) {
    log("%s", why.c_str());
    return false;
  }
  return true;
}

// The daemon's view from getdomaininfolist plus the records: after a restart (--attach) and
// after the relay link's reconnect, the same steps.
bool Daemon::rebuild_view(std::string& why) {
  auto infos = domain_list(xen_);
  if (auto* failure = std::get_if<Failure>(&infos)) {
    why = failure->message;
    return false;
  }
  reconcile(std::get<std::vector<xc_domaininfo_t>>(infos));
  return true;
}

// After a restart: the records and the hypervisor's list, matched by uuid (the domain handle
// createdomain was given). A half-built domain is destroyed; a record whose domain is gone is
// dropped; the console ports the old session bound are bound again (OPEN closed them).
void Daemon::reconcile(const std::vector<xc_domaininfo_t>& infos) {
  std::vector<std::string> skipped;
  auto records = load_records(options_.state_dir, skipped);
  // What the loop knew is in the records (every change is saved); dom0's ports of the old
  // session are gone (OPEN closed them).
  records_.clear();
  consoles_.clear();
  for (const auto& name : skipped) log("%s: not a domain record, left alone", name.c_str());
  std::map<std::string, const xc_domaininfo_t*> by_uuid;
  for (const auto& info : infos)
    if (info.domain != 0) by_uuid[format_uuid(info.handle)] = &info;
  for (auto& record : records) {
    auto found = by_uuid.find(record.uuid);
    if (found == by_uuid.end()) {
      log("%s (%s): its domain is gone, record dropped", record.name.c_str(), record.uuid.c_str());
      remove_record(options_.state_dir, record.uuid);
      continue;
    }
    uint32_t domid = found->second->domain;
    if (record.state == RecordState::building) {
      log("%s: d%u was half built when the daemon stopped: destroyed", record.name.c_str(), domid);
      xc_domain_destroy(xen_.xch, domid);
      remove_record(options_.state_dir, record.uuid);
      continue;
    }
    if (record.domid != domid) record.domid = domid;
    add_history(record, unix_ns(), "attached");
    if (record.console_mfn) {
      ConsoleState console;
      console.mfn = record.console_mfn;
      console.remote_port = record.console_port;
      uint32_t local = 0;
      if (pvhv_xc_evtchn_bind_interdomain(xen_.xch, domid, record.console_port, &local) == 0)
        console.local_port = local;
      console.log_path = options_.state_dir + "/console-" + record.name + ".log";
      struct stat log_stat {};
      if (stat(console.log_path.c_str(), &log_stat) == 0) console.log_bytes = size_t(log_stat.st_size);
      consoles_[domid] = console;
    }
    if (record.store_mfn) {  // the store rebuilt: its nodes from the record, the ring taken over as it is
      xenstore::DomainSpec spec{
          domid, record.name, record.uuid, record.config.memory_mib * 1024, record.console_port, record.console_mfn};
      if (auto failure = introduce(spec, {domid, record.store_mfn, record.store_port, 0}, &record.xenstore_state))
        log("%s: %s", record.name.c_str(), failure->message.c_str());
    }
    save(record);
    records_[record.uuid] = record;
  }
  // The store's domains without a record now (destroyed while the link was down): released,
  // their dom0 ports gone with the old session.
  for (uint32_t domid : xenstore_.served())
    if (!record_of(domid)) xenstore_.remove_domain(domid);
  view_.replace(infos, view_.list_begins());
}

void Daemon::accept() {
  acceptor_.async_accept([this](boost::system::error_code error, Local::socket socket) {
    if (stopping_) return;
    if (!error) {
      if (clients_.size() >= kMaxClients) {
        boost::system::error_code ignored;
        socket.close(ignored);  // a client flood cannot exhaust the daemon's descriptors
      } else {
        auto client = std::make_shared<Client>(*this, std::move(socket));
        clients_[client.get()] = client;
        client->start();
      }
    }
    accept();
  });
}

void Daemon::stop() {
  if (stopping_) return;
  stopping_ = true;
  log("stopping: dom0 shuts down, then the machine");
  boost::system::error_code ignored;
  acceptor_.close(ignored);
  monitor_.cancel();
  trace_.finish();  // a recording ends with what the buffers hold (before dom0 goes)
  xenstore_.stop();
  for (auto& [raw, weak] : std::map<Client*, std::weak_ptr<Client>>(clients_))
    if (auto client = weak.lock()) client->close();
  asio::post(pool_, [this] {
    watch_.stop();  // before dom0 goes: its thread waits on the link
    if (pvhv_xc_dom0_shutdown(xen_.xch, SHUTDOWN_poweroff) != 0) log("SHUTDOWN: %s", std::strerror(errno));
    stop_machine(machine_, machine_.hypervisor == "ours" ? 30 : 10);
    unlink((options_.state_dir + "/pvhvd.sock").c_str());
    asio::post(io_, [this] { io_.stop(); });
  });
}

void Daemon::save(const DomainRecord& record) {
  std::string why;
  if (!write_record(options_.state_dir, record, why)) log("record %s: %s", record.name.c_str(), why.c_str());
}

void Daemon::drop(const std::string& uuid, const char* why) {
  auto it = records_.find(uuid);
  if (it == records_.end()) return;
  log("%s (d%u): %s", it->second.name.c_str(), it->second.domid, why);
  release(it->second.domid);
  auto console = consoles_.find(it->second.domid);
  if (console != consoles_.end()) {
    uint32_t port = console->second.local_port;
    if (port) asio::post(pool_, [this, port] { pvhv_xc_evtchn_close(xen_.xch, port); });
    consoles_.erase(console);
  }
  // Xen's xl console returns when its domain is gone: the daemon ends the attached streams.
  for (auto& [raw, weak] : clients_)
    if (auto client = weak.lock(); client && client->console_domid() == it->second.domid) client->close_when_written();
  remove_record(options_.state_dir, uuid);
  records_.erase(it);
}

DomainRecord* Daemon::record_of(uint32_t domid) {
  for (auto& [uuid, record] : records_)
    if (record.domid == domid && domid != 0) return &record;
  return nullptr;
}

std::variant<uint32_t, Failure> Daemon::resolve(const DomainRef& ref) const {
  if (ref.domid) {
    if (view_.contains(*ref.domid)) return *ref.domid;
    return invalid_domain(ref.text);
  }
  if (ref.text == "Domain-0") return uint32_t(0);
  for (const auto& [uuid, record] : records_)
    if (record.name == ref.text && record.domid != 0) return record.domid;
  return invalid_domain(ref.text);
}

// ---- the monitor: the domain view, console rings, on_* actions, waiters ----

void Daemon::schedule_monitor() {
  if (stopping_) return;
  monitor_.expires_after(std::chrono::milliseconds(options_.monitor_ms));
  monitor_.async_wait([this](boost::system::error_code error) {
    if (!error) monitor_tick();
  });
}

void Daemon::monitor_tick() {
  if (link_lost()) return schedule_monitor();  // the reconnect reads the view again
  struct Ring {
    uint32_t domid;
    ConsoleState state;
  };
  std::vector<Ring> rings;
  for (auto& [domid, console] : consoles_) {
    rings.push_back({domid, console});
    console.pending_input.clear();  // handed to the link thread; what does not fit comes back
  }
  struct Result {
    std::optional<std::variant<std::vector<xc_domaininfo_t>, Failure>> infos;  // when the view was due
    std::map<uint32_t, std::string> output;
    std::map<uint32_t, std::string> unwritten;
  };
  // The domain view only when due (view_refresh.h): VIRQ_DOM_EXC reads it as soon as it comes.
  tick_running_ = true;
  bool read_view = refresh_.due(steady_ms());
  if (read_view) refresh_.begin(steady_ms());
  uint64_t stamp = view_.list_begins();
  on_link(
      [this, rings, read_view]() {
        Result result{std::nullopt, {}, {}};
        if (read_view) result.infos = domain_list(xen_);
        for (const auto& ring : rings) {
          auto page = read_console([&](uint32_t offset, void* out, size_t length) {
            return pvhv_xc_foreign_read(xen_.xch, ring.domid, ring.state.mfn, offset, out, length) == 0;
          });
          if (!page) continue;
          bool notify = false;
          auto& drained = page->output;
          if (!drained.bytes.empty() || drained.bad_index) {
            pvhv_xc_foreign_write(xen_.xch, ring.domid, ring.state.mfn, kOutConsOffset, &drained.cons, 4);
            // A guest waiting for room waits on a full ring: it is told once half is free. Not
            // after every read: each event ends the guest's SCHEDOP_block early.
            notify = drained.bytes.size() >= kConsoleOutBytes / 2 || drained.bad_index;
            result.output[ring.domid] = std::move(drained.bytes);
          }
          if (!ring.state.pending_input.empty()) {
            auto fill = fill_input(page->in_cons, page->in_prod, ring.state.pending_input);
            size_t first = std::min<size_t>(fill.bytes.size(), kConsoleInBytes - fill.offset);
            if (first)
              pvhv_xc_foreign_write(xen_.xch, ring.domid, ring.state.mfn, fill.offset, fill.bytes.data(), first);
            if (fill.bytes.size() > first)
              pvhv_xc_foreign_write(xen_.xch, ring.domid, ring.state.mfn, 0, fill.bytes.data() + first,
                                    fill.bytes.size() - first);
            if (fill.taken) {
              pvhv_xc_foreign_write(xen_.xch, ring.domid, ring.state.mfn, kInProdOffset, &fill.prod, 4);
              notify = true;
            }
            result.unwritten[ring.domid] = ring.state.pending_input.substr(fill.taken);
          }
          if (notify && ring.state.local_port) pvhv_xc_evtchn_notify(xen_.xch, ring.state.local_port);
        }
        return result;
      },
      [this, stamp](Result result) {
        for (auto& [domid, rest] : result.unwritten) {
          auto it = consoles_.find(domid);
          if (it != consoles_.end()) it->second.pending_input.insert(0, rest);
        }
        for (auto& [domid, bytes] : result.output) append_console(domid, bytes);
        if (result.infos) {
          refresh_.end();
          if (auto* infos = std::get_if<std::vector<xc_domaininfo_t>>(&*result.infos))
            apply_view(std::move(*infos), stamp);
          else
            log("monitor: %s", std::get<Failure>(*result.infos).message.c_str());
        }
        tick_running_ = false;
        if (refresh_.stale() && !stopping_) return monitor_tick();  // an exception came meanwhile
        schedule_monitor();
      });
}

void Daemon::start_watch() {
  std::string why;
  bool watching = watch_.start(
      xen_.xch, uint64_t(options_.safety_poll_ms), [this] { asio::post(io_, [this] { refresh_view(); }); },
      [this](uint32_t port) { asio::post(io_, [this, port] { relay_.on_event(port); }); }, why);
  refresh_.set_watching(watching);
  if (watching)
    log("watching VIRQ_DOM_EXC (dom0 port %u); the domain list is also read every %d ms", watch_.port(),
        options_.safety_poll_ms);
  else
    log("%s: the domain list is read every %d ms instead", why.c_str(), options_.monitor_ms);
}

// On VIRQ_DOM_EXC: a monitor tick now (the list, then every console ring, so a domain that
// shut down has its last output drained before its on_* action), unless one is under way: that
// one is followed by another at once.
void Daemon::refresh_view() {
  if (stopping_) return;
  refresh_.exception();
  if (tick_running_) return;
  monitor_.cancel();
  monitor_tick();
}

void Daemon::append_console(uint32_t domid, const std::string& bytes) {
  auto it = consoles_.find(domid);
  if (it == consoles_.end() || bytes.empty()) return;
  ConsoleState& console = it->second;
  if (console.log_bytes + bytes.size() > options_.console_log_bytes) {  // bounded: one older log kept
    std::rename(console.log_path.c_str(), (console.log_path + ".1").c_str());
    console.log_bytes = 0;
  }
  std::ofstream(console.log_path, std::ios::app | std::ios::binary) << bytes;
  console.log_bytes += bytes.size();
  for (auto& [raw, weak] : clients_)
    if (auto client = weak.lock(); client && client->console_domid() == domid) client->send_console(bytes);
}

void Daemon::apply_view(std::vector<xc_domaininfo_t> infos, uint64_t stamp) {
  view_.replace(std::move(infos), stamp);
  std::map<uint32_t, const xc_domaininfo_t*> by_domid;
  for (const auto& info : view_.domains()) by_domid[info.domain] = &info;
  std::vector<std::string> gone;
  for (auto& [uuid, record] : records_) {
    if (record.state == RecordState::building || acting_.count(uuid)) continue;
    auto found = by_domid.find(record.domid);
    if (found == by_domid.end() || format_uuid(found->second->handle) != uuid) {
      gone.push_back(uuid);
      continue;
    }
    uint32_t flags = found->second->flags;
    if (flags & (XEN_DOMINF_shutdown | XEN_DOMINF_dying)) xenstore_.domain_shut_down(record.domid);
    if ((flags & XEN_DOMINF_shutdown) && record.state == RecordState::running)
      on_shutdown_state(record, (flags >> XEN_DOMINF_shutdownshift) & XEN_DOMINF_shutdownmask);
  }
  for (const auto& uuid : gone) drop(uuid, "gone (destroyed elsewhere)");
  // Waiters of shutdown/reboot -w: the domain gone, or rebooted under a new domid.
  std::vector<Waiter> still;
  for (auto& waiter : waiters_) {
    bool present = by_domid.count(waiter.domid) && format_uuid(by_domid[waiter.domid]->handle) == waiter.uuid;
    auto record = records_.find(waiter.uuid);
    bool rebooted = waiter.reboot && record != records_.end() && record->second.domid != waiter.domid &&
                    record->second.state == RecordState::running;
    if (!present || rebooted)
      waiter.reply(ok_answer(waiter.id));
    else
      still.push_back(std::move(waiter));
  }
  waiters_ = std::move(still);
}

// xl's monitor: the domain shut down; its config says what happens next.
void Daemon::on_shutdown_state(DomainRecord& record, unsigned reason) {
  Action action = record.config.on_poweroff;
  const char* why = "poweroff";
  if (reason == SHUTDOWN_reboot) {
    action = record.config.on_reboot;
    why = "reboot";
  } else if (reason == SHUTDOWN_crash || reason == SHUTDOWN_watchdog) {
    action = record.config.on_crash;
    why = "crash";
  } else if (reason == SHUTDOWN_suspend) {
    return;  // a suspend is the saver's to finish: nothing here
  }
  add_history(record, unix_ns(), std::string("shutdown ") + why + ": " + action_name(action));
  log("%s (d%u) shut down (%s): %s", record.name.c_str(), record.domid, why, action_name(action));
  if (action == Action::preserve) {
    record.state = RecordState::preserved;
    save(record);
    return;
  }
  std::string uuid = record.uuid;
  uint32_t domid = record.domid;
  acting_.insert(uuid);
  on_link([this, domid] { return xc_domain_destroy(xen_.xch, domid) == 0 ? 0 : errno; },
          [this, uuid, action](int error) {
            acting_.erase(uuid);
            auto it = records_.find(uuid);
            if (it == records_.end()) return;
            if (error && link_lost()) return;  // still shut down: the view after the reconnect acts
            if (error) log("%s: destroy: %s", it->second.name.c_str(), std::strerror(error));
            if (action == Action::destroy) return drop(uuid, "destroyed");
            // restart: the same name, uuid and config under a new domid.
            DomainRecord next = it->second;
            if (auto console = consoles_.find(next.domid); console != consoles_.end()) {
              uint32_t port = console->second.local_port;  // dom0's host ports are few (32)
              if (port) asio::post(pool_, [this, port] { pvhv_xc_evtchn_close(xen_.xch, port); });
              consoles_.erase(console);
            }
            release(next.domid);
            next.xenstore_state = Json::object();  // the new guest makes its own
            next.domid = 0;
            next.state = RecordState::building;
            add_history(next, unix_ns(), "restart");
            it->second = next;
            save(next);
            acting_.insert(uuid);
            build(next, [this, uuid](std::optional<Failure> failure) {
              acting_.erase(uuid);
              if (failure) {
                log("restart failed: %s", failure->message.c_str());
                drop(uuid, "restart failed");
              }
              refresh_view();  // no exception announces a domain that starts: `reboot -w` waits for it
            });
          });
}

// ---- requests ----

void Daemon::handle(std::shared_ptr<Client> client, Request request, Reply reply) {
  const std::string& op = request.op;
  uint64_t id = request.id;
  try {
    if (op == "hello") {
      auto version = u64_field(request.body, "version");
      if (auto* failure = std::get_if<Failure>(&version)) return reply(error_answer(id, *failure));
      auto& asked = std::get<std::optional<uint64_t>>(version);
      if (asked && *asked != uint64_t(kProtocolVersion))
        return reply(error_answer(
            id, {kEprotonosupport, "protocol version " + std::to_string(*asked) + " not supported (pvhvd speaks 1)"}));
      Json answer = ok_answer(id);
      answer["version"] = kProtocolVersion;
      answer["daemon"] = "pvhvd";
      answer["hypervisor"] = version_.hypervisor;
      answer["hypervisor_version"] = version_.version;
      answer["started_ns"] = started_ns_;
      return reply(answer);
    }
    if (link_down_ && op != "console" && op.rfind("xenstore_", 0) != 0)
      return reply(error_answer(id, {kEagain, "the relay link is down: pvhvd is reconnecting"}));
    if (op == "list") return op_list(request.body, id, reply);
    if (op == "create") return op_create(request.body, id, reply);
    if (op == "shutdown" || op == "reboot") return op_shutdown(op == "reboot", request.body, id, reply);
    if (op == "console") return op_console(client, request.body, id, reply);
    if (op == "info") {
      return on_link(
          [this] {
            auto info = host_info(xen_);
            if (auto* fields = std::get_if<Json>(&info))  // ours: the machine's clock (machine_clock.h)
              if (auto ns = hypervisor_system_time_ns(xen_.xch)) (*fields)["system_time_ns"] = *ns;
            return info;
          },
          [id, reply](std::variant<Json, Failure> info) {
            if (auto* failure = std::get_if<Failure>(&info)) return reply(error_answer(id, *failure));
            Json answer = std::get<Json>(info);
            answer["id"] = id;
            answer["ok"] = true;
            reply(answer);
          });
    }
    if (op == "dmesg") {
      auto clear = bool_field(request.body, "clear", false);
      if (auto* failure = std::get_if<Failure>(&clear)) return reply(error_answer(id, *failure));
      bool c = std::get<bool>(clear);
      return on_link([this, c] { return read_console(xen_, c); },
                     [id, reply](std::variant<std::string, Failure> text) {
                       if (auto* failure = std::get_if<Failure>(&text)) return reply(error_answer(id, *failure));
                       Json answer = ok_answer(id);
                       answer["text"] = std::get<std::string>(text);
                       reply(answer);
                     });
    }
    if (op == "vcpu_list") {
      std::vector<std::pair<uint32_t, std::string>> domains;
      if (request.body.contains("dom") && !request.body["dom"].is_null()) {
        auto ref = domain_field(request.body);
        if (auto* failure = std::get_if<Failure>(&ref)) return reply(error_answer(id, *failure));
        auto domid = resolve(std::get<DomainRef>(ref));
        if (auto* failure = std::get_if<Failure>(&domid)) return reply(error_answer(id, *failure));
        domains.push_back({std::get<uint32_t>(domid), ""});
      } else {
        for (const auto& info : view_.domains()) domains.push_back({info.domain, ""});
      }
      for (auto& [domid, name] : domains) {
        auto* record = record_of(domid);
        name = domid == 0 ? "Domain-0" : record ? record->name : "";
      }
      return on_link([this, domains] { return vcpu_list(xen_, domains); },
                     [id, reply](std::variant<Json, Failure> v) {
                       if (auto* failure = std::get_if<Failure>(&v)) return reply(error_answer(id, *failure));
                       Json answer = ok_answer(id);
                       answer["vcpus"] = std::get<Json>(v);
                       reply(answer);
                     });
    }
    if (op == "relay") {  // libxenctrl's daemon: transport (relay_forward.h)
      client->become_relay();
      return reply(ok_answer(id));
    }
    if (op == "ptwr_mode") return op_ptwr_mode(request.body, id, reply);
    if (op == "trace_start") return trace_.start(request.body, id, reply);
    if (op == "trace_stop") return trace_.stop(id, reply);
    if (op == "xenstore_read" || op == "xenstore_write" || op == "xenstore_ls")
      return reply(xenstore_.client_op(op, request.body, id));
    return op_simple(op, request.body, id, reply);
  } catch (const std::exception& e) {  // never dies on a request: it is answered
    reply(error_answer(id, {kEio, std::string("internal error: ") + e.what()}));
  }
}

Json Daemon::domain_json(const xc_domaininfo_t& info) const {
  const DomainRecord* record = nullptr;
  for (const auto& [uuid, r] : records_)
    if (r.domid == info.domain && info.domain != 0) record = &r;
  unsigned reason = (info.flags >> XEN_DOMINF_shutdownshift) & XEN_DOMINF_shutdownmask;
  bool shutdown = info.flags & XEN_DOMINF_shutdown;
  bool crashed = shutdown && reason == SHUTDOWN_crash;  // as 4.17's xc_dominfo: a crash is not "shutdown"
  Json j{{"domid", info.domain},
         {"name", info.domain == 0 ? "Domain-0"
                  : record         ? record->name
                                   : ""},
         {"uuid", format_uuid(info.handle)},
         {"running", bool(info.flags & XEN_DOMINF_running)},
         {"blocked", bool(info.flags & XEN_DOMINF_blocked)},
         {"paused", bool(info.flags & XEN_DOMINF_paused)},
         {"shutdown", shutdown && !crashed},
         {"crashed", crashed},
         {"dying", bool(info.flags & XEN_DOMINF_dying)},
         {"shutdown_reason", shutdown ? reason : 0},
         {"mem_kb", info.tot_pages * 4},
         {"max_mem_kb", info.max_pages * 4},
         {"vcpus", info.max_vcpu_id + 1},
         {"vcpus_online", info.nr_online_vcpus},
         {"cpu_time_ns", info.cpu_time},
         {"start_time", record ? record->start_unix_s : started_ns_ / 1000000000},
         {"ptwr_mode", record && !record->config.ptwr_mode.empty() ? record->config.ptwr_mode
                       : options_.ptwr_mode.empty()                ? "emulate"
                                                                   : options_.ptwr_mode}};
  if (record) {
    j["config"] = config_to_json(record->config);
    j["config_text"] = record->config_text;
    j["state"] = state_name(record->state);
  } else {
    j["config"] = Json::object();
    j["config_text"] = "";
  }
  return j;
}

void Daemon::op_list(const Json& body, uint64_t id, Reply reply) {
  std::optional<uint32_t> only;
  if (body.contains("dom") && !body["dom"].is_null()) {
    auto ref = domain_field(body);
    if (auto* failure = std::get_if<Failure>(&ref)) return reply(error_answer(id, *failure));
    auto domid = resolve(std::get<DomainRef>(ref));
    if (auto* failure = std::get_if<Failure>(&domid)) return reply(error_answer(id, *failure));
    only = std::get<uint32_t>(domid);
  }
  uint64_t stamp = view_.list_begins();
  on_link([this] { return domain_list(xen_); },
          [this, id, reply, only, stamp](std::variant<std::vector<xc_domaininfo_t>, Failure> infos) {
            if (auto* failure = std::get_if<Failure>(&infos)) return reply(error_answer(id, *failure));
            view_.replace(std::move(std::get<std::vector<xc_domaininfo_t>>(infos)), stamp);
            Json domains = Json::array();
            for (const auto& info : view_.domains())
              if (!only || info.domain == *only) domains.push_back(domain_json(info));
            if (only && domains.empty()) return reply(error_answer(id, invalid_domain(std::to_string(*only))));
            Json answer = ok_answer(id);
            answer["domains"] = domains;
            reply(answer);
          });
}

void Daemon::op_simple(const std::string& op, const Json& body, uint64_t id, Reply reply) {
  auto ref = domain_field(body);
  if (auto* failure = std::get_if<Failure>(&ref)) return reply(error_answer(id, *failure));
  auto resolved = resolve(std::get<DomainRef>(ref));
  if (auto* failure = std::get_if<Failure>(&resolved)) return reply(error_answer(id, *failure));
  uint32_t domid = std::get<uint32_t>(resolved);
  uint64_t kb = 0;
  if (op == "mem_max") {
    auto value = u64_field(body, "kb");
    if (auto* failure = std::get_if<Failure>(&value)) return reply(error_answer(id, *failure));
    if (!std::get<std::optional<uint64_t>>(value)) return reply(error_answer(id, {kEinval, "missing \"kb\""}));
    kb = *std::get<std::optional<uint64_t>>(value);
  } else if (op == "destroy") {
    auto force = bool_field(body, "force", false);
    if (auto* failure = std::get_if<Failure>(&force)) return reply(error_answer(id, *failure));
    if (domid == 0) return reply(error_answer(id, {kEinval, "Cannot destroy privileged domain 0"}));
    if (auto* record = record_of(domid); record && acting_.count(record->uuid))
      return reply(error_answer(id, {kEbusy, "domain " + std::to_string(domid) + " is being built"}));
  }
  on_link(
      [this, op, domid, kb]() -> std::optional<Failure> {
        int rc = -1;
        if (op == "pause")
          rc = xc_domain_pause(xen_.xch, domid);
        else if (op == "unpause")
          rc = xc_domain_unpause(xen_.xch, domid);
        else if (op == "destroy")
          rc = xc_domain_destroy(xen_.xch, domid);
        else if (op == "mem_max")
          rc = xc_domain_setmaxmem(xen_.xch, domid, kb);
        if (rc != 0) return xc_failure("xc_domain_" + op);
        return std::nullopt;
      },
      [this, op, domid, id, reply](std::optional<Failure> failure) {
        if (failure) return reply(error_answer(id, *failure));
        if (op == "destroy")
          if (auto* record = record_of(domid)) drop(record->uuid, "destroyed on request");
        reply(ok_answer(id));
      });
}

void Daemon::op_shutdown(bool reboot, const Json& body, uint64_t id, Reply reply) {
  auto ref = domain_field(body);
  if (auto* failure = std::get_if<Failure>(&ref)) return reply(error_answer(id, *failure));
  auto wait = bool_field(body, "wait", false);
  if (auto* failure = std::get_if<Failure>(&wait)) return reply(error_answer(id, *failure));
  auto resolved = resolve(std::get<DomainRef>(ref));
  if (auto* failure = std::get_if<Failure>(&resolved)) return reply(error_answer(id, *failure));
  uint32_t domid = std::get<uint32_t>(resolved);
  if (domid == 0) return reply(error_answer(id, {kEinval, "Domain-0 is shut down by stopping pvhvd"}));
  auto* record = record_of(domid);
  std::string uuid = record ? record->uuid : "";
  bool w = std::get<bool>(wait);
  auto fallback = bool_field(body, "fallback", false);
  if (auto* failure = std::get_if<Failure>(&fallback)) return reply(error_answer(id, *failure));
  ask_guest(domid, reboot, std::get<bool>(fallback),
            [this, domid, uuid, reboot, w, id, reply](std::optional<Failure> failure, int rc, bool fell_back) {
              if (failure) {
                Json answer = error_answer(id, *failure);
                answer["rc"] = rc;
                return reply(answer);
              }
              auto answer_with = [reply, fell_back](Json answer) {
                answer["fallback"] = fell_back;
                reply(answer);
              };
              if (!w) return answer_with(ok_answer(id));
              waiters_.push_back(Waiter{domid, uuid, reboot, answer_with, id});
            });
}

void Daemon::op_console(std::shared_ptr<Client> client, const Json& body, uint64_t id, Reply reply) {
  auto ref = domain_field(body);
  if (auto* failure = std::get_if<Failure>(&ref)) return reply(error_answer(id, *failure));
  auto resolved = resolve(std::get<DomainRef>(ref));
  if (auto* failure = std::get_if<Failure>(&resolved)) return reply(error_answer(id, *failure));
  uint32_t domid = std::get<uint32_t>(resolved);
  if (!consoles_.count(domid))
    return reply(error_answer(id, {kEnoent, "domain " + std::to_string(domid) + " has no console pvhvd serves"}));
  client->become_console(domid);
  reply(ok_answer(id));
}

// xl ptwr-mode (ptwr_mode.h): a set is kept in the domain's record, so `list` shows it.
void Daemon::op_ptwr_mode(const Json& body, uint64_t id, Reply reply) {
  auto ref = domain_field(body);
  if (auto* failure = std::get_if<Failure>(&ref)) return reply(error_answer(id, *failure));
  auto mode = ptwr_mode_argument(body);
  if (auto* failure = std::get_if<Failure>(&mode)) return reply(error_answer(id, *failure));
  auto resolved = resolve(std::get<DomainRef>(ref));
  if (auto* failure = std::get_if<Failure>(&resolved)) return reply(error_answer(id, *failure));
  uint32_t domid = std::get<uint32_t>(resolved);
  auto wanted = std::get<std::optional<unsigned>>(mode);
  on_link([this, domid, wanted] { return ptwr_mode_call(xen_.xch, domid, wanted); },
          [this, domid, wanted, id, reply](std::variant<Json, Failure> result) {
            if (auto* failure = std::get_if<Failure>(&result)) return reply(error_answer(id, *failure));
            Json answer = std::get<Json>(result);
            if (auto* record = record_of(domid); record && wanted) {
              record->config.ptwr_mode = answer["mode"].get<std::string>();
              save(*record);
            }
            answer["id"] = id;
            answer["ok"] = true;
            reply(answer);
          });
}

void Daemon::op_create(const Json& body, uint64_t id, Reply reply) {
  auto given = body.find("config");
  if (given == body.end()) return reply(error_answer(id, {kEinval, "missing \"config\""}));
  auto resolved = resolve_config(*given);
  if (auto* failure = std::get_if<Failure>(&resolved)) return reply(error_answer(id, *failure));
  auto paused = bool_field(body, "paused", false);
  if (auto* failure = std::get_if<Failure>(&paused)) return reply(error_answer(id, *failure));
  auto text = string_field(body, "config_text");
  auto file = string_field(body, "config_file");
  if (auto* failure = std::get_if<Failure>(&text)) return reply(error_answer(id, *failure));
  if (auto* failure = std::get_if<Failure>(&file)) return reply(error_answer(id, *failure));
  DomainRecord record;
  record.config = std::get<DomainConfig>(resolved);
  record.name = record.config.name;
  // The loop is the only thread deciding names: of two creates of one name, the first reserves it.
  if (names_reserved_.count(record.name)) return reply(error_answer(id, name_in_use(record.name)));
  for (const auto& [uuid, other] : records_)
    if (other.name == record.name) return reply(error_answer(id, name_in_use(record.name)));
  if (record.config.uuid.empty()) record.config.uuid = random_uuid();
  record.uuid = record.config.uuid;
  if (records_.count(record.uuid))
    return reply(error_answer(id, {kEexist, "a domain with uuid " + record.uuid + " already exists"}));
  record.config_given = *given;
  record.config_text = std::get<std::optional<std::string>>(text).value_or("");
  record.config_file = std::get<std::optional<std::string>>(file).value_or("");
  record.paused_at_create = std::get<bool>(paused);
  record.start_unix_s = unix_ns() / 1000000000;
  add_history(record, unix_ns(), "building");
  names_reserved_.insert(record.name);
  // A new domain starts a new log; a restart goes on in its predecessor's (as xenconsoled's).
  std::remove((options_.state_dir + "/console-" + record.name + ".log").c_str());
  std::string name = record.name, uuid = record.uuid;
  build(record, [this, name, uuid, id, reply](std::optional<Failure> failure) {
    names_reserved_.erase(name);
    if (failure) return reply(error_answer(id, *failure));
    auto it = records_.find(uuid);
    if (it == records_.end()) return reply(error_answer(id, {kEio, "the domain went away while built"}));
    Json answer = ok_answer(id);
    answer["domid"] = it->second.domid;
    answer["name"] = name;
    answer["uuid"] = uuid;
    reply(answer);
  });
}

// libxl's order for a PV domain, on a link thread (minutes: every frame crosses the relay):
// createdomain with the uuid as handle, max_vcpus, max_mem (+1 MiB slack, LIBXL_MAXMEM_CONSTANT),
// the memory map, the builder, the console port bound in dom0, unpause. The record is written
// "building" once the domain exists, "running" once it runs; a failure destroys the domain.
void Daemon::build(DomainRecord record, std::function<void(std::optional<Failure>)> done) {
  std::string uuid = record.uuid;
  records_[uuid] = record;
  save(record);
  struct Built {
    std::optional<Failure> failure;
    uint32_t domid = 0;
    pvhv_pv_built layout{};
    uint32_t local_port = 0;
    xc_domaininfo_t info{};  // as the create leaves it, for the view
  };
  auto config = record.config;
  bool paused = record.paused_at_create;
  auto on_domid = [this, uuid](uint32_t domid) {
    asio::post(io_, [this, uuid, domid] {
      auto it = records_.find(uuid);
      if (it == records_.end()) return;
      it->second.domid = domid;
      save(it->second);
    });
  };
  on_link(
      [this, config, paused, on_domid]() {
        Built out;
        std::vector<uint8_t> kernel, ramdisk;
        if (!read_file(config.kernel, kernel)) {
          out.failure = Failure{errno ? errno : kEnoent, "kernel \"" + config.kernel + "\": " + std::strerror(errno)};
          return out;
        }
        if (!config.ramdisk.empty() && !read_file(config.ramdisk, ramdisk)) {
          out.failure = Failure{errno ? errno : kEnoent, "ramdisk \"" + config.ramdisk + "\": " + std::strerror(errno)};
          return out;
        }
        uint64_t memory_kb = config.memory_mib * 1024, maxmem_kb = config.maxmem_mib * 1024;
        xc_physinfo_t physinfo{};
        if (xc_physinfo(xen_.xch, &physinfo) != 0) {
          out.failure = xc_failure("xc_physinfo");
          return out;
        }
        if (physinfo.free_pages * 4 < memory_kb + 1024) {  // xl's words when the memory is not there
          out.failure = Failure{kEnomem, "failed to free memory for the domain"};
          return out;
        }
        xen_domctl_createdomain create;
        pvhv_pv_createdomain_defaults(&create);
        auto handle = parse_uuid(config.uuid);
        for (size_t i = 0; i < 16; ++i) create.handle[i] = (*handle)[i];
        uint32_t domid = 0;
        if (xc_domain_create(xen_.xch, &domid, &create) != 0) {
          out.failure = xc_failure("xc_domain_create");
          return out;
        }
        out.domid = domid;
        on_domid(domid);
        auto fail = [&](const std::string& what) {
          out.failure = xc_failure(what);
          int saved = errno;
          xc_domain_destroy(xen_.xch, domid);
          errno = saved;
          return out;
        };
        if (xc_domain_max_vcpus(xen_.xch, domid, 1) != 0) return fail("xc_domain_max_vcpus");
        if (!config.ptwr_mode.empty())  // xl.cfg's ptwr_mode= (ptwr_mode.h)
          if (auto failure = apply_config_ptwr_mode(xen_.xch, domid, config.ptwr_mode)) {
            fail("ptwr_mode");
            out.failure = *failure;
            return out;
          }
        if (xc_domain_setmaxmem(xen_.xch, domid, maxmem_kb + 1024) != 0) return fail("xc_domain_setmaxmem");
        if (xc_domain_set_memmap_limit(xen_.xch, domid, maxmem_kb + 1024) != 0)
          return fail("xc_domain_set_memmap_limit");
        pvhv_pv_image image{kernel.data(),
                            kernel.size(),
                            ramdisk.empty() ? nullptr : ramdisk.data(),
                            ramdisk.size(),
                            config.cmdline.c_str(),
                            memory_kb,
                            0,
                            0};
        if (pvhv_build_pv_domain(xen_.xch, domid, &image, &out.layout) != 0) {
          std::string message = out.layout.message;
          fail("pvhv_build_pv_domain");
          out.failure->message = "xc_dom_build failed: " + message;
          return out;
        }
        if (pvhv_xc_evtchn_bind_interdomain(xen_.xch, domid, out.layout.console_port, &out.local_port) != 0)
          return fail("binding the console port");
        // libxl's order: the domain's nodes written and the domain introduced before it runs.
        xenstore::DomainSpec spec{
            domid, config.name, config.uuid, memory_kb, out.layout.console_port, out.layout.console_mfn};
        if (auto failure = introduce(spec, {domid, out.layout.xenstore_mfn, out.layout.store_port, 0}, nullptr)) {
          fail("xenstore");
          out.failure = failure;
          return out;
        }
        if (!paused && xc_domain_unpause(xen_.xch, domid) != 0) return fail("xc_domain_unpause");
        if (xc_domain_getinfolist(xen_.xch, domid, 1, &out.info) != 1 || out.info.domain != domid) {
          out.info = xc_domaininfo_t{};  // the next list tells the rest
          out.info.domain = domid;
          for (size_t i = 0; i < 16; ++i) out.info.handle[i] = create.handle[i];
        }
        return out;
      },
      [this, uuid, done](Built built) {
        auto it = records_.find(uuid);
        if (built.failure && built.domid && link_lost()) {
          // The domain is half built and cannot be destroyed now: its record says "building",
          // so the reconnect's reconcile destroys it, as a restarted daemon does.
          log("%s: d%u half built when the relay link dropped: destroyed once it is back",
              it != records_.end() ? it->second.name.c_str() : uuid.c_str(), built.domid);
          return done(built.failure);
        }
        if (built.failure) {
          if (built.domid) release(built.domid);
          if (it != records_.end()) {
            remove_record(options_.state_dir, uuid);
            records_.erase(it);
          }
          return done(built.failure);
        }
        if (it == records_.end()) return done(Failure{kEio, "record lost"});
        DomainRecord& record = it->second;
        record.domid = built.domid;
        record.state = RecordState::running;
        record.console_mfn = built.layout.console_mfn;
        record.console_port = built.layout.console_port;
        record.store_mfn = built.layout.xenstore_mfn;
        record.store_port = built.layout.store_port;
        add_history(record, unix_ns(), record.paused_at_create ? "running (paused)" : "running");
        save(record);
        ConsoleState console;
        console.mfn = built.layout.console_mfn;
        console.remote_port = built.layout.console_port;
        console.local_port = built.local_port;
        console.log_path = options_.state_dir + "/console-" + record.name + ".log";
        struct stat log_stat {};
        if (stat(console.log_path.c_str(), &log_stat) == 0) console.log_bytes = size_t(log_stat.st_size);
        consoles_[built.domid] = console;
        view_.created(built.info);
        log("%s: d%u built (%lu frames written)", record.name.c_str(), built.domid,
            (unsigned long)built.layout.pages_written);
        done(std::nullopt);
      });
}

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

// ---- xenstore ----

void Daemon::start_xenstore() {
  xenstore_.set_poll_ms(options_.xenstore_poll_ms);
  xenstore_.start(
      io_, pool_, xen_.xch,
      [this](StoreIncident incident) {  // recorded where the domain's administrator looks
        log("d%u: %s", incident.domid, incident.text.c_str());
        auto* record = record_of(incident.domid);
        if (!record) return;
        add_history(*record, unix_ns(), incident.text);
        save(*record);
        append_console(incident.domid, "[pvhvd] " + incident.text + "\n");
      },
      [this](uint32_t domid, Json state) {
        if (auto* record = record_of(domid)) {
          record->xenstore_state = std::move(state);
          save(*record);
        }
      });
}

// On a link thread or at attach: dom0's port bound to the domain's store port, the domain
// introduced to the store with its nodes.
std::optional<Failure> Daemon::introduce(xenstore::DomainSpec spec, StoreRing ring, const Json* saved) {
  if (pvhv_xc_evtchn_bind_interdomain(xen_.xch, spec.domid, ring.remote_port, &ring.local_port) != 0)
    return xc_failure("binding the xenstore port");
  if (xenstore_.serves(spec.domid)) {  // the link reconnected: the store kept the domain as it was
    xenstore_.rebind(spec.domid, ring.local_port);
    return std::nullopt;
  }
  if (int err = xenstore_.add_domain(spec, ring, saved)) {
    pvhv_xc_evtchn_close(xen_.xch, ring.local_port);
    return Failure{err, "xenstore: introducing d" + std::to_string(spec.domid) + ": " + std::strerror(err)};
  }
  return std::nullopt;
}

void Daemon::release(uint32_t domid) {
  auto port = xenstore_.remove_domain(domid);
  if (port && *port) asio::post(pool_, [this, p = *port] { pvhv_xc_evtchn_close(xen_.xch, p); });
}

// libxl's PV control (libxl__domain_pvcontrol): control/shutdown written, the guest's
// acknowledgement (the node emptied) awaited for 60 s. A guest whose xenbus never came up (no
// control/feature-<cmd> = 1) has no PV control here: xl's -F then falls back to
// SCHEDOP_remote_shutdown, where Xen's xl sends an HVM guest an ACPI button event.
void Daemon::ask_guest(uint32_t domid, bool reboot, bool fallback, AskDone done) {
  const std::string cmd = reboot ? "reboot" : "poweroff";
  const std::string control = xenstore::domain_path(domid) + "/control/";
  if (xenstore_.serves(domid) && xenstore_.read(control + "feature-" + cmd).value_or("") == "1") {
    xenstore_.write(control + "shutdown", cmd);
    return xenstore_.await_ack(control + "shutdown", [done, domid](bool acked) {
      if (acked) return done(std::nullopt, 0, false);
      done(Failure{ETIMEDOUT,
                   "libxl: error: Domain " + std::to_string(domid) + ":guest didn't acknowledge control request: -9"},
           -9, false);
    });
  }
  if (!fallback)
    return done(
        Failure{kEopnotsupp, "PV control interface not available: external graceful " +
                                 std::string(reboot ? "reboot" : "shutdown") + " not possible.\nUse \"-F\" to " +
                                 "fallback to " + (reboot ? "ACPI reset event." : "ACPI power event.")},
        -10, false);  // ERROR_NOPARAVIRT
  on_link(
      [this, domid, reboot] {
        return xc_domain_shutdown(xen_.xch, domid, reboot ? SHUTDOWN_reboot : SHUTDOWN_poweroff) == 0
                   ? std::optional<Failure>()
                   : std::optional<Failure>(xc_failure("xc_domain_shutdown"));
      },
      [done](std::optional<Failure> failure) { done(failure, failure ? -3 : 0, true); });
}

}  // namespace

int run_daemon(const DaemonOptions& options) {
  signal(SIGPIPE, SIG_IGN);
  asio::io_context io;
  Daemon daemon(options, io);
  return daemon.run();
}

}  // namespace pvhv::daemon
