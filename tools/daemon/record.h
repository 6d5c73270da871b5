// A domain's record in the state directory: what the daemon must know again after a crash or
// `kill -9` that the hypervisor does not keep (name, config as given and as resolved, what the
// daemon was doing: building, running, ...). Pure: JSON in and out, unit-tested in
// tests/unit/daemon_record_test.cpp; record_store.cpp writes them atomically.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tools/daemon/protocol.h"

namespace pvhv::daemon {

// building: created, the builder at work (a restart finds it half-built and destroys it);
// running: built and unpaused (or paused on request); preserved: shut down, kept by on_* preserve.
enum class RecordState { building, running, preserved };
const char* state_name(RecordState state);
std::optional<RecordState> parse_state(std::string_view text);

struct StateChange {
  int64_t unix_ns = 0;
  std::string state;  // a RecordState name, or an event ("shutdown poweroff", "restart", ...)
  uint32_t domid = 0;
};

struct DomainRecord {
  std::string name;
  std::string uuid;
  uint32_t domid = 0;  // 0: createdomain has not answered yet
  RecordState state = RecordState::building;
  Json config_given;    // the create request's config object, as the client sent it
  DomainConfig config;  // resolved
  std::string config_text;
  std::string config_file;
  bool paused_at_create = false;
  int64_t start_unix_s = 0;
  uint64_t console_mfn = 0;  // the builder's console ring frame and port (0: not built yet)
  uint32_t console_port = 0;
  uint64_t store_mfn = 0;  // the builder's xenstore ring frame and port (0: none)
  uint32_t store_port = 0;
  Json xenstore_state = Json::object();  // the guest's own nodes and watches (store_state.h)
  std::vector<StateChange> history;
};

constexpr size_t kMaxHistory = 64;  // the oldest entries go first: a record stays small

Json record_to_json(const DomainRecord& record);
// A record read back; nullopt for anything that is not one (never throws).
std::optional<DomainRecord> record_from_json(const Json& json);
void add_history(DomainRecord& record, int64_t unix_ns, std::string state);

// The record's file name in the state directory (by uuid: stable across restarts and renames).
std::string record_file_name(const std::string& uuid);

}  // namespace pvhv::daemon
