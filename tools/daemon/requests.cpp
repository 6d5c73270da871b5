// pvhvd's client requests, one op_* per family (tools/PROTOCOL.md, server.h).
#include "tools/daemon/server.h"

namespace pvhv::daemon::server {

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
    if (op == "vcpu_pin") return op_vcpu_pin(request.body, id, reply);
    if (op == "cpupool_list")
      return on_link([this] { return cpupool_list(xen_); },
                     [id, reply](std::variant<Json, Failure> pools) {
                       if (auto* failure = std::get_if<Failure>(&pools)) return reply(error_answer(id, *failure));
                       Json answer = ok_answer(id);
                       answer["pools"] = std::get<Json>(pools);
                       reply(answer);
                     });
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
  std::string destroying;  // the uuid of the record of a domain destroyed here
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
    // Until its record is dropped, a view showing it dying is this destroy's, not another's.
    if (auto* record = record_of(domid)) acting_.insert(destroying = record->uuid);
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
      [this, destroying, id, reply](std::optional<Failure> failure) {
        if (!destroying.empty()) acting_.erase(destroying);
        if (failure) return reply(error_answer(id, *failure));
        // Answered once the daemon let go of its rings: the domain is gone by then, as after xl's.
        if (!destroying.empty()) return drop(destroying, "destroyed on request", [id, reply] { reply(ok_answer(id)); });
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

// xl vcpu-pin: `vcpu` a number or "all" (every vCPU the domain has); `hard` / `soft` arrays of
// CPU numbers, or null to leave that mask alone. The answer: each vCPU's effective masks.
void Daemon::op_vcpu_pin(const Json& body, uint64_t id, Reply reply) {
  auto ref = domain_field(body);
  if (auto* failure = std::get_if<Failure>(&ref)) return reply(error_answer(id, *failure));
  auto resolved = resolve(std::get<DomainRef>(ref));
  if (auto* failure = std::get_if<Failure>(&resolved)) return reply(error_answer(id, *failure));
  uint32_t domid = std::get<uint32_t>(resolved);
  std::optional<uint32_t> vcpu;  // absent: all
  auto v = body.find("vcpu");
  if (v == body.end() || !(v->is_number_unsigned() || (v->is_string() && v->get<std::string>() == "all")))
    return reply(error_answer(id, {kEinval, "field \"vcpu\" must be a vCPU number or \"all\""}));
  if (v->is_number_unsigned()) {
    if (v->get<uint64_t>() > 0xffffffffu) return reply(error_answer(id, {kEinval, "vCPU number too large"}));
    vcpu = v->get<uint32_t>();
  }
  auto mask = [&](const char* key, std::optional<std::vector<uint32_t>>& into) -> std::optional<Failure> {
    auto it = body.find(key);
    if (it == body.end() || it->is_null()) return std::nullopt;
    if (!it->is_array()) return Failure{kEinval, std::string("field \"") + key + "\" must be an array of CPUs"};
    into.emplace();
    for (const Json& cpu : *it) {
      if (!cpu.is_number_unsigned() || cpu.get<uint64_t>() > 0xffffffffu)
        return Failure{kEinval, std::string("field \"") + key + "\" must be an array of CPUs"};
      into->push_back(cpu.get<uint32_t>());
    }
    return std::nullopt;
  };
  std::optional<std::vector<uint32_t>> hard, soft;
  if (auto failure = mask("hard", hard)) return reply(error_answer(id, *failure));
  if (auto failure = mask("soft", soft)) return reply(error_answer(id, *failure));
  if (!hard && !soft) return reply(error_answer(id, {kEinval, "neither \"hard\" nor \"soft\" given"}));
  on_link(
      [this, domid, vcpu, hard, soft]() -> std::variant<Json, Failure> {
        std::vector<uint32_t> targets;
        if (vcpu) {
          targets.push_back(*vcpu);
        } else {
          xc_domaininfo_t info{};
          if (xc_domain_getinfolist(xen_.xch, domid, 1, &info) != 1 || info.domain != domid)
            return xc_failure("xc_domain_getinfolist");
          if (info.max_vcpu_id != XEN_INVALID_MAX_VCPU_ID)
            for (uint32_t i = 0; i <= info.max_vcpu_id; ++i) targets.push_back(i);
        }
        Json results = Json::array();
        for (uint32_t target : targets) {
          auto result = set_vcpu_affinity(xen_, domid, target, hard, soft);
          if (auto* failure = std::get_if<Failure>(&result)) return *failure;
          results.push_back(std::get<Json>(result));
        }
        return results;
      },
      [id, reply](std::variant<Json, Failure> result) {
        if (auto* failure = std::get_if<Failure>(&result)) return reply(error_answer(id, *failure));
        Json answer = ok_answer(id);
        answer["vcpus"] = std::get<Json>(result);
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

}  // namespace pvhv::daemon::server
