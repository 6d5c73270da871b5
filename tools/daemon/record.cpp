// Domain records as JSON (record.h).
#include "tools/daemon/record.h"

namespace pvhv::daemon {

const char* state_name(RecordState state) {
  switch (state) {
    case RecordState::building: return "building";
    case RecordState::running: return "running";
    case RecordState::preserved: return "preserved";
  }
  return "building";
}

std::optional<RecordState> parse_state(std::string_view text) {
  if (text == "building") return RecordState::building;
  if (text == "running") return RecordState::running;
  if (text == "preserved") return RecordState::preserved;
  return std::nullopt;
}

Json record_to_json(const DomainRecord& r) {
  Json history = Json::array();
  for (const auto& change : r.history)
    history.push_back(Json{{"unix_ns", change.unix_ns}, {"state", change.state}, {"domid", change.domid}});
  return Json{{"version", 1},
              {"name", r.name},
              {"uuid", r.uuid},
              {"domid", r.domid},
              {"state", state_name(r.state)},
              {"config_given", r.config_given},
              {"config", config_to_json(r.config)},
              {"config_text", r.config_text},
              {"config_file", r.config_file},
              {"paused_at_create", r.paused_at_create},
              {"start_time", r.start_unix_s},
              {"console_mfn", r.console_mfn},
              {"console_port", r.console_port},
              {"store_mfn", r.store_mfn},
              {"store_port", r.store_port},
              {"xenstore_state", r.xenstore_state},
              {"history", history}};
}

std::optional<DomainRecord> record_from_json(const Json& j) {
  if (!j.is_object() || j.value("version", Json()) != Json(1)) return std::nullopt;
  try {
    DomainRecord r;
    r.name = j.at("name").get<std::string>();
    r.uuid = j.at("uuid").get<std::string>();
    if (!parse_uuid(r.uuid) || r.name.empty()) return std::nullopt;
    r.domid = j.at("domid").get<uint32_t>();
    auto state = parse_state(j.at("state").get<std::string>());
    if (!state) return std::nullopt;
    r.state = *state;
    r.config_given = j.at("config_given");
    if (!r.config_given.is_object()) return std::nullopt;
    auto resolved = resolve_config(j.at("config"));
    if (auto* config = std::get_if<DomainConfig>(&resolved))
      r.config = *config;
    else
      return std::nullopt;
    if (r.config.name != r.name) return std::nullopt;
    r.config_text = j.at("config_text").get<std::string>();
    r.config_file = j.at("config_file").get<std::string>();
    r.paused_at_create = j.at("paused_at_create").get<bool>();
    r.start_unix_s = j.at("start_time").get<int64_t>();
    r.console_mfn = j.at("console_mfn").get<uint64_t>();
    r.console_port = j.at("console_port").get<uint32_t>();
    r.store_mfn = j.at("store_mfn").get<uint64_t>();
    r.store_port = j.at("store_port").get<uint32_t>();
    r.xenstore_state = j.at("xenstore_state");
    if (!r.xenstore_state.is_object()) return std::nullopt;
    for (const auto& change : j.at("history"))
      r.history.push_back(StateChange{change.at("unix_ns").get<int64_t>(), change.at("state").get<std::string>(),
                                      change.at("domid").get<uint32_t>()});
    return r;
  } catch (const Json::exception&) {
    return std::nullopt;  // a field missing or of another type: not a record
  }
}

void add_history(DomainRecord& record, int64_t unix_ns, std::string state) {
  record.history.push_back(StateChange{unix_ns, std::move(state), record.domid});
  if (record.history.size() > kMaxHistory) record.history.erase(record.history.begin());
}

std::string record_file_name(const std::string& uuid) { return "domain-" + uuid + ".json"; }

}  // namespace pvhv::daemon
