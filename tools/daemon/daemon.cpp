// pvhvd's loop: the link, the clients' socket, the records and their reconciliation (daemon.h, server.h).
#include "tools/daemon/server.h"

namespace pvhv::daemon::server {

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
    MachineOptions machine{options_.state_dir, options_.build_dir, options_.source_dir, options_.hypervisor,
                           options_.ptwr_mode, options_.memory,    options_.smp};
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
// dropped; the console ports the old session bound are bound again and the rings mapped again
// (OPEN closed the ports and unmapped the rings).
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
    if (record.console_mfn) {  // the ring held again: the old session's mapping went with it
      uint32_t local = 0;
      if (pvhv_xc_evtchn_bind_interdomain(xen_.xch, domid, record.console_port, &local) != 0) local = 0;
      std::string why;
      uint32_t handle = hold_ring(xen_.xch, domid, record.console_mfn, why);
      if (!handle) log("%s: console: %s; read by copies", record.name.c_str(), why.c_str());
      consoles_[domid] = new_console(record.name, record.console_mfn, record.console_port, local, handle);
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

void Daemon::drop(const std::string& uuid, const char* why, std::function<void()> then) {
  auto it = records_.find(uuid);
  if (it == records_.end()) {
    if (then) then();
    return;
  }
  const uint32_t domid = it->second.domid;
  log("%s (d%u): %s", it->second.name.c_str(), domid, why);
  // Xen's xl console returns when its domain is gone: the daemon ends the attached streams. Over
  // a copy: a client with nothing left to write closes at once, and leaves clients_.
  for (auto& [raw, weak] : std::map<Client*, std::weak_ptr<Client>>(clients_))
    if (auto client = weak.lock(); client && client->console_domid() == domid) client->close_when_written();
  remove_record(options_.state_dir, uuid);
  records_.erase(it);
  release_backends(domid, std::move(then));
}

// ---- what the daemon holds of a domain as its backend ----
//
// As xenconsoled and xenstored, the daemon keeps each domU's console ring (from its build) and
// xenstore ring (from INTRODUCE) mapped writable in dom0 (ring_page.h), and dom0's ports bound to
// them, until it lets the domain go. A destroyed domain stays dying while a mapping holds one of
// its frames: once they are unmapped the list is read again, since no VIRQ_DOM_EXC says it went.

void Daemon::release_backends(uint32_t domid, std::function<void()> then) {
  std::vector<uint32_t> ports, handles;
  if (auto ring = xenstore_.remove_domain(domid)) {
    ports.push_back(ring->local_port);
    handles.push_back(ring->handle);
  }
  if (auto console = consoles_.find(domid); console != consoles_.end()) {
    ports.push_back(console->second.local_port);  // dom0's host ports are few (32)
    handles.push_back(console->second.handle);
    consoles_.erase(console);
  }
  let_go(std::move(ports), std::move(handles), std::move(then));
}

void Daemon::let_go(std::vector<uint32_t> ports, std::vector<uint32_t> handles, std::function<void()> then) {
  std::erase(ports, 0u);
  std::erase(handles, 0u);
  if (ports.empty() && handles.empty()) {
    if (then) then();
    return;
  }
  on_link(
      [this, ports, handles] {
        for (uint32_t handle : handles) release_ring(xen_.xch, handle);
        for (uint32_t port : ports) pvhv_xc_evtchn_close(xen_.xch, port);
        return 0;
      },
      [this, then](int) {
        refresh_view();  // also what shutdown -w waits for, held back while the on_* action ran
        if (then) then();
      });
}

ConsoleState Daemon::new_console(const std::string& name, uint64_t mfn, uint32_t remote_port, uint32_t local_port,
                                 uint32_t handle) const {
  ConsoleState console;
  console.mfn = mfn;
  console.remote_port = remote_port;
  console.local_port = local_port;
  console.handle = handle;
  console.log_path = options_.state_dir + "/console-" + name + ".log";
  struct stat log_stat {};
  if (stat(console.log_path.c_str(), &log_stat) == 0) console.log_bytes = size_t(log_stat.st_size);
  return console;
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

}  // namespace pvhv::daemon::server

namespace pvhv::daemon {

int run_daemon(const DaemonOptions& options) {
  signal(SIGPIPE, SIG_IGN);
  boost::asio::io_context io;
  server::Daemon daemon(options, io);
  return daemon.run();
}

}  // namespace pvhv::daemon
