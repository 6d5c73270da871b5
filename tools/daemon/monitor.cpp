// pvhvd's monitor: the domain view, console rings, on_* actions and waiters (server.h).
#include "tools/daemon/server.h"

namespace pvhv::daemon::server {

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
          const RingPage ring_page{ring.domid, ring.state.mfn, ring.state.handle};
          auto page = read_console(
              [&](uint32_t offset, void* out, size_t length) { return ring_page.read(xen_.xch, offset, out, length); });
          if (!page) continue;
          bool notify = false;
          auto& drained = page->output;
          if (!drained.bytes.empty() || drained.bad_index) {
            ring_page.write(xen_.xch, kOutConsOffset, &drained.cons, 4);
            // A guest waiting for room waits on a full ring: it is told once half is free. Not
            // after every read: each event ends the guest's SCHEDOP_block early.
            notify = drained.bytes.size() >= kConsoleOutBytes / 2 || drained.bad_index;
            result.output[ring.domid] = std::move(drained.bytes);
          }
          if (!ring.state.pending_input.empty()) {
            auto fill = fill_input(page->in_cons, page->in_prod, ring.state.pending_input);
            size_t first = std::min<size_t>(fill.bytes.size(), kConsoleInBytes - fill.offset);
            if (first) ring_page.write(xen_.xch, fill.offset, fill.bytes.data(), first);
            if (fill.bytes.size() > first)
              ring_page.write(xen_.xch, 0, fill.bytes.data() + first, fill.bytes.size() - first);
            if (fill.taken) {
              ring_page.write(xen_.xch, kInProdOffset, &fill.prod, 4);
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
    if (flags & XEN_DOMINF_dying) {  // destroyed by another client: only the daemon's mappings keep it
      gone.push_back(uuid);
      continue;
    }
    if (flags & XEN_DOMINF_shutdown) xenstore_.domain_shut_down(record.domid);
    if ((flags & XEN_DOMINF_shutdown) && record.state == RecordState::running)
      on_shutdown_state(record, (flags >> XEN_DOMINF_shutdownshift) & XEN_DOMINF_shutdownmask);
  }
  for (const auto& uuid : gone) drop(uuid, "gone (destroyed elsewhere)");
  // Waiters of shutdown/reboot -w: the domain gone, or rebooted under a new domid; not while
  // its on_* action (a destroy, a restart's build) is under way: a reboot's old domain is gone
  // before its new one exists.
  std::vector<Waiter> still;
  for (auto& waiter : waiters_) {
    if (acting_.count(waiter.uuid)) {
      still.push_back(std::move(waiter));
      continue;
    }
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
            release_backends(next.domid);
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

}  // namespace pvhv::daemon::server
