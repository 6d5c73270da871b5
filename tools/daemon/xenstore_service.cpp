// pvhvd's xenstore: the store, the domains' rings over the relay (xenstore_service.h).
#include "tools/daemon/xenstore_service.h"

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>

#include <xenctrl_pvhv.h>

namespace pvhv::daemon {
namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

struct XenstoreService::Domain {
  StoreRing ring;
  std::string uuid;
  std::unique_ptr<xenstore::RingConnection> conn;
  bool resume = false;  // the first round takes the server's indices from the page
  bool broken_reported = false;
  bool backlog_reported = false;
  uint64_t next_error_report = 1;  // 1, 10, 100...: a guest hitting a limit in a loop is logged, not flooding the log
  bool dirty = false;              // requests were served since its state was last looked at
  Json saved_state;
  Clock::time_point state_at{};
};

XenstoreService::XenstoreService() : dom0_(store_.connect(0)) {}
XenstoreService::~XenstoreService() = default;

void XenstoreService::start(asio::io_context& io, asio::thread_pool& pool, xc_interface* xch,
                            IncidentHandler on_incident, StateHandler on_state) {
  io_ = &io;
  pool_ = &pool;
  xch_ = xch;
  on_incident_ = std::move(on_incident);
  on_state_ = std::move(on_state);
  timer_ = std::make_unique<asio::steady_timer>(io);
  schedule();
}

void XenstoreService::stop() {
  stopped_ = true;
  if (timer_) timer_->cancel();
}

int XenstoreService::add_domain(const xenstore::DomainSpec& spec, const StoreRing& ring, const Json* saved) {
  std::lock_guard lock(mutex_);
  if (domains_.count(spec.domid)) return EEXIST;
  if (int err = xenstore::create_domain_nodes(store_, spec)) return err;
  store_.handle(dom0_, xenstore::make_request(XS_INTRODUCE, {std::to_string(spec.domid), std::to_string(ring.mfn),
                                                             std::to_string(ring.remote_port)}));
  auto answer = store_.take_output(dom0_);
  if (answer.empty() || answer.front().type != XS_INTRODUCE) return EINVAL;
  auto domain = std::make_unique<Domain>();
  domain->ring = ring;
  domain->uuid = spec.uuid;
  domain->conn = std::make_unique<xenstore::RingConnection>(store_, spec.domid);
  if (saved) {
    restore_guest_store_state(store_, domain->conn->conn(), spec.domid, *saved);
    domain->resume = true;
    domain->saved_state = guest_store_state(store_, domain->conn->conn(), spec.domid);
  }
  domains_[spec.domid] = std::move(domain);
  return 0;
}

std::optional<StoreRing> XenstoreService::remove_domain(uint32_t domid) {
  std::lock_guard lock(mutex_);
  auto it = domains_.find(domid);
  if (it == domains_.end()) return std::nullopt;
  StoreRing ring = it->second->ring;
  std::string uuid = it->second->uuid;
  domains_.erase(it);  // its connection ends: watches, transactions
  store_.handle(dom0_, xenstore::make_request(XS_RELEASE, {std::to_string(domid)}));
  store_.take_output(dom0_);
  store_.remove(xenstore::domain_path(domid));  // libxl's cleanup of a destroyed domain
  store_.remove("/vm/" + uuid);
  return ring;
}

bool XenstoreService::serves(uint32_t domid) const {
  std::lock_guard lock(mutex_);
  return domains_.count(domid) != 0;
}

void XenstoreService::rebind(uint32_t domid, uint32_t local_port, uint32_t handle) {
  std::lock_guard lock(mutex_);
  if (auto it = domains_.find(domid); it != domains_.end()) {
    it->second->ring.local_port = local_port;
    it->second->ring.handle = handle;
  }
}

void XenstoreService::domain_shut_down(uint32_t domid) {
  std::lock_guard lock(mutex_);
  if (domains_.count(domid)) store_.domain_shut_down(domid);
}

std::vector<uint32_t> XenstoreService::served() const {
  std::lock_guard lock(mutex_);
  std::vector<uint32_t> domids;
  for (const auto& [domid, domain] : domains_) domids.push_back(domid);
  return domids;
}

int XenstoreService::write(const std::string& path, const std::string& value) {
  std::lock_guard lock(mutex_);
  return store_.write(path, value);
}

std::optional<std::string> XenstoreService::read(const std::string& path) const {
  std::lock_guard lock(mutex_);
  return store_.read(path);
}

namespace {

// Every node below `path`, parents first, children in the store's order (xenstore-ls's walk).
void list_nodes(const xenstore::Store& store, const std::string& path, int depth, Json& out) {
  for (const auto& name : store.directory(path)) {
    std::string child = (path == "/" ? "/" : path + "/") + name;
    auto value = store.read(child);
    Json perms = Json::array();
    for (const auto& perm : store.get_perms(child).value_or(xenstore::Perms{}))
      perms.push_back(xenstore::format_perm(perm));
    out.push_back({{"depth", depth},
                   {"name", name},
                   {"path", child},
                   {"value", value ? Json(*value) : Json()},
                   {"value_hex", value ? Json(to_hex(*value)) : Json()},
                   {"perms", perms}});
    list_nodes(store, child, depth + 1, out);
  }
}

}  // namespace

Json XenstoreService::client_op(const std::string& op, const Json& body, uint64_t id) {
  auto path_field = string_field(body, "path");
  if (auto* failure = std::get_if<Failure>(&path_field)) return error_answer(id, *failure);
  std::string path = std::get<std::optional<std::string>>(path_field).value_or(op == "xenstore_ls" ? "/" : "");
  if (path != "/" && !xenstore::is_valid_node_path(path))
    return error_answer(id, {kEinval, "\"" + path + "\" is not an absolute xenstore path"});
  std::lock_guard lock(mutex_);
  if (op == "xenstore_write") {
    auto value = string_field(body, "value");
    if (auto* failure = std::get_if<Failure>(&value)) return error_answer(id, *failure);
    if (!std::get<std::optional<std::string>>(value)) return error_answer(id, {kEinval, "missing \"value\""});
    if (int err = store_.write(path, *std::get<std::optional<std::string>>(value)))
      return error_answer(id, {err, "xenstore write " + path + ": " + std::strerror(err)});
    return ok_answer(id);
  }
  if (!store_.read(path)) return error_answer(id, {kEnoent, "xenstore " + path + ": " + std::strerror(ENOENT)});
  Json answer = ok_answer(id);
  if (op == "xenstore_read") {
    std::string value = *store_.read(path);
    answer["value"] = value;
    answer["value_hex"] = to_hex(value);
    return answer;
  }
  Json nodes = Json::array();
  list_nodes(store_, path, 0, nodes);
  answer["nodes"] = nodes;
  return answer;
}

void XenstoreService::await_ack(const std::string& path, std::function<void(bool)> done) {
  acks_.push_back({path, Clock::now() + std::chrono::milliseconds(kAckTimeoutMs), std::move(done)});
}

void XenstoreService::schedule() {
  if (stopped_) return;
  timer_->expires_after(std::chrono::milliseconds(poll_ms_));
  timer_->async_wait([this](boost::system::error_code error) {
    if (error || stopped_) return;
    asio::post(*pool_, [this] {
      auto incidents = poll(xch_);
      asio::post(*io_, [this, incidents = std::move(incidents)]() mutable {
        for (auto& incident : incidents) on_incident_(std::move(incident));
        after_poll();
        schedule();
      });
    });
  });
}

namespace {

std::string ring_error(const xenstore_domain_interface& page, const xenstore::RingIndexes& seen) {
  char text[256];
  if (page.error == XENSTORE_ERROR_RINGIDX)
    std::snprintf(text, sizeof text,
                  "xenstore: ring indexes out of bounds (req_prod %u req_cons %u, rsp_prod %u rsp_cons %u): "
                  "XENSTORE_ERROR_RINGIDX, the ring is no longer served",
                  seen.req_prod, page.req_cons, page.rsp_prod, seen.rsp_cons);
  else
    std::snprintf(text, sizeof text,
                  "xenstore: a malformed message on the ring (a payload over %u bytes): XENSTORE_ERROR_PROTO, "
                  "the ring is no longer served",
                  unsigned(XENSTORE_PAYLOAD_MAX));
  return text;
}

}  // namespace

// One round: the four indices of each page; the whole page only where there is work; the
// server's fields written back (rsp[], req_cons, rsp_prod, error: the rest is the guest's).
std::vector<StoreIncident> XenstoreService::poll(xc_interface* xch) {
  std::vector<StoreRing> rings;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [domid, domain] : domains_)
      if (!domain->conn->broken()) rings.push_back(domain->ring);
  }
  std::vector<StoreIncident> incidents;
  for (const auto& ring : rings) {
    xenstore::RingIndexes seen{};
    xenstore_domain_interface page;
    const RingPage ring_page = ring.page();
    auto read = xenstore::read_ring_page(
        [&](uint32_t offset, void* out, size_t length) { return ring_page.read(xch, offset, out, length); },
        [&](const xenstore::RingIndexes& indexes) {
          std::lock_guard lock(mutex_);
          auto it = domains_.find(ring.domid);
          return it != domains_.end() &&
                 (it->second->resume || it->second->conn->wants_service(indexes.req_prod, indexes.rsp_cons));
        },
        seen, page);
    if (read != xenstore::RingPageRead::read) continue;  // failed: the domain is going, the monitor will see it
    xenstore::RingConnection::Result result;
    {
      std::lock_guard lock(mutex_);
      auto it = domains_.find(ring.domid);
      if (it == domains_.end()) continue;
      Domain& domain = *it->second;
      if (domain.resume) domain.conn->resume(page), domain.resume = false;
      result = domain.conn->serve(page);
      domain.dirty = domain.dirty || result.notify;
      if (result.broken && !domain.broken_reported) {
        domain.broken_reported = true;
        incidents.push_back({ring.domid, ring_error(page, seen)});
      }
      if (domain.conn->errors_answered() >= domain.next_error_report) {
        incidents.push_back(
            {ring.domid, "xenstore: " + std::to_string(domain.conn->errors_answered()) +
                             " requests answered with an error so far (the last: " + domain.conn->last_error() + ")"});
        domain.next_error_report *= 10;
      }
      // Once per backlog: it is over when the guest has read every answer.
      size_t pending = domain.conn->pending_output_bytes();
      if (pending >= xenstore::RingConnection::kMaxPendingOutput && !domain.backlog_reported) {
        domain.backlog_reported = true;
        incidents.push_back({ring.domid, "xenstore: " + std::to_string(pending) +
                                             " bytes of answers unread: its requests wait until it reads"});
      }
      if (pending == 0) domain.backlog_reported = false;
    }
    if (result.page_changed) {
      ring_page.write(xch, offsetof(xenstore_domain_interface, rsp), page.rsp, sizeof page.rsp);
      ring_page.write(xch, offsetof(xenstore_domain_interface, req_cons), &page.req_cons, 4);
      ring_page.write(xch, offsetof(xenstore_domain_interface, rsp_prod), &page.rsp_prod, 4);
      ring_page.write(xch, offsetof(xenstore_domain_interface, error), &page.error, 4);
    }
    if (result.notify && ring.local_port) pvhv_xc_evtchn_notify(xch, ring.local_port);
  }
  return incidents;
}

// On the loop: control requests acknowledged (or not in time), guests' states to record (at
// most once a second each: a guest rewriting a node in a loop does not make a record per round).
void XenstoreService::after_poll() {
  auto now = Clock::now();
  std::vector<std::pair<std::function<void(bool)>, bool>> finished;
  {
    std::lock_guard lock(mutex_);
    std::vector<Ack> still;
    for (auto& ack : acks_) {
      auto value = store_.read(ack.path);
      if (!value || value->empty())
        finished.push_back({std::move(ack.done), true});
      else if (now >= ack.until)
        finished.push_back({std::move(ack.done), false});
      else
        still.push_back(std::move(ack));
    }
    acks_ = std::move(still);
  }
  std::vector<std::pair<uint32_t, Json>> states;
  {
    std::lock_guard lock(mutex_);
    for (auto& [domid, domain] : domains_) {
      if (!domain->dirty || now - domain->state_at < std::chrono::seconds(1)) continue;
      domain->dirty = false;
      domain->state_at = now;
      Json state = guest_store_state(store_, domain->conn->conn(), domid);
      if (state == domain->saved_state) continue;
      domain->saved_state = state;
      states.push_back({domid, std::move(state)});
    }
  }
  for (auto& [done, acked] : finished) done(acked);
  for (auto& [domid, state] : states) on_state_(domid, std::move(state));
}

}  // namespace pvhv::daemon
