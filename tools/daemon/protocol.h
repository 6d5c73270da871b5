// The daemon's client protocol (tools/PROTOCOL.md, "The daemon's client protocol"): JSON lines,
// one request object per line, one answer per request, in order. Pure: no I/O, unit-tested in
// tests/unit/daemon_protocol_test.cpp.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace pvhv::daemon {

using Json = nlohmann::json;

constexpr int kProtocolVersion = 1;
constexpr size_t kMaxLineBytes = size_t(1) << 20;  // a request line, its newline excluded

// errno values the protocol answers with (Linux's numbers, as xl prints them).
constexpr int kEsrch = 3, kE2big = 7, kEnoent = 2, kEnomem = 12, kEexist = 17, kEinval = 22, kEopnotsupp = 95,
              kEprotonosupport = 93, kEbusy = 16, kEio = 5, kEagain = 11;

struct Request {
  uint64_t id = 0;
  std::string op;
  Json body;  // the whole object (fields are read from it per op)
};

// An answer that is an error: errno and the message as xl prints it.
struct Failure {
  int error = kEinval;
  std::string message;
};

Json ok_answer(uint64_t id);
Json error_answer(const Json& id, const Failure& failure);  // id: a number or null

// One line (without its newline) as a request, or the error answer for it (id null when the line
// gives no usable id). Never throws.
std::variant<Request, Json> parse_request(std::string_view line);

bool known_op(std::string_view op);

// Typed optional fields of a request: the default when absent, a Failure when of another type.
std::variant<bool, Failure> bool_field(const Json& body, const char* key, bool fallback);
std::variant<std::optional<std::string>, Failure> string_field(const Json& body, const char* key);
std::variant<std::optional<uint64_t>, Failure> u64_field(const Json& body, const char* key);

// A `dom` argument: a decimal domid or a domain name (as Xen's xl accepts both).
struct DomainRef {
  std::optional<uint32_t> domid;  // set when the string is a decimal domid
  std::string text;               // as given, for messages and name lookup
};
std::variant<DomainRef, Failure> domain_field(const Json& body, const char* key = "dom");
Failure invalid_domain(const std::string& text);  // ESRCH, xl's message

// The on_poweroff / on_reboot / on_crash actions the daemon applies.
enum class Action { destroy, restart, preserve };
std::optional<Action> parse_action(std::string_view text);
const char* action_name(Action action);

// xl.cfg's cpus / cpus_soft as the create request carries them: one CPU list (xl's syntax,
// tools/xl/config/cpu_range.h) for every vCPU, or one per vCPU (per_vcpu: the i-th for vCPU i).
struct CpuAffinityText {
  bool given = false;
  bool per_vcpu = false;
  std::vector<std::string> lists;
  // vCPU i's list, or null when it keeps every CPU.
  const std::string* for_vcpu(uint32_t vcpu) const {
    if (!given) return nullptr;
    if (!per_vcpu) return lists.empty() ? nullptr : &lists[0];
    return vcpu < lists.size() ? &lists[vcpu] : nullptr;
  }
};

// A create request's config with xl's defaults filled in (libxl's for a PV guest).
struct DomainConfig {
  std::string name;
  std::string kernel;
  std::string ramdisk;  // empty: none
  std::string cmdline;
  uint64_t memory_mib = 32;  // libxl's default target and maximum
  uint64_t maxmem_mib = 32;
  uint32_t vcpus = 1;
  uint32_t maxvcpus = 1;
  Action on_poweroff = Action::destroy;
  Action on_reboot = Action::restart;
  Action on_crash = Action::destroy;
  std::string uuid;           // empty: the daemon generates one
  std::string ptwr_mode;      // empty: the hypervisor's default
  CpuAffinityText cpus;       // hard affinity, applied after max_vcpus (libxl__build_pre)
  CpuAffinityText cpus_soft;  // soft affinity
};
std::variant<DomainConfig, Failure> resolve_config(const Json& config);
Json config_to_json(const DomainConfig& config);

// Xen's "Domain with name ..." and name rules.
Failure name_in_use(const std::string& name);

// UUIDs as xl writes them: 8-4-4-4-12 lowercase hex.
std::optional<std::array<uint8_t, 16>> parse_uuid(std::string_view text);
std::string format_uuid(const uint8_t (&bytes)[16]);
std::string format_uuid(const std::array<uint8_t, 16>& bytes);

}  // namespace pvhv::daemon
