// The daemon's request parsing and validation (protocol.h).
#include "tools/daemon/protocol.h"

#include "tools/xl/config/cpu_range.h"

#include <cstdio>

namespace pvhv::daemon {
namespace {

constexpr std::string_view kOps[] = {
    "hello",      "list",      "create", "destroy",       "shutdown",       "reboot",     "pause",        "unpause",
    "mem_max",    "ptwr_mode", "info",   "dmesg",         "vcpu_list",      "vcpu_pin",   "cpupool_list", "trace_start",
    "trace_stop", "console",   "relay",  "xenstore_read", "xenstore_write", "xenstore_ls"};

Failure wrong_type(const char* key, const char* expected) {
  return {kEinval, std::string("field \"") + key + "\" must be " + expected};
}

std::optional<uint64_t> decimal(std::string_view text) {
  if (text.empty() || text.size() > 10) return std::nullopt;
  uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + uint64_t(c - '0');
  }
  return value;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

Json ok_answer(uint64_t id) { return Json{{"id", id}, {"ok", true}}; }

Json error_answer(const Json& id, const Failure& failure) {
  return Json{{"id", id}, {"ok", false}, {"errno", failure.error}, {"error", failure.message}};
}

bool known_op(std::string_view op) {
  for (auto known : kOps)
    if (op == known) return true;
  return false;
}

std::variant<Request, Json> parse_request(std::string_view line) {
  if (line.size() > kMaxLineBytes) return error_answer(nullptr, {kE2big, "request longer than 1 MiB"});
  Json body = Json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) return error_answer(nullptr, {kEinval, "request is not JSON"});
  if (!body.is_object()) return error_answer(nullptr, {kEinval, "request is not a JSON object"});
  auto id = body.find("id");
  if (id == body.end() || !id->is_number_unsigned())
    return error_answer(nullptr, {kEinval, "request without an unsigned integer \"id\""});
  auto op = body.find("op");
  if (op == body.end() || !op->is_string()) return error_answer(*id, {kEinval, "request without \"op\""});
  Request request;
  request.id = id->get<uint64_t>();
  request.op = op->get<std::string>();
  if (!known_op(request.op)) return error_answer(*id, {kEopnotsupp, "unknown op \"" + request.op + "\""});
  request.body = std::move(body);
  return request;
}

std::variant<bool, Failure> bool_field(const Json& body, const char* key, bool fallback) {
  auto it = body.find(key);
  if (it == body.end() || it->is_null()) return fallback;
  if (!it->is_boolean()) return wrong_type(key, "a boolean");
  return it->get<bool>();
}

std::variant<std::optional<std::string>, Failure> string_field(const Json& body, const char* key) {
  auto it = body.find(key);
  if (it == body.end() || it->is_null()) return std::optional<std::string>();
  if (!it->is_string()) return wrong_type(key, "a string");
  return std::optional<std::string>(it->get<std::string>());
}

std::variant<std::optional<uint64_t>, Failure> u64_field(const Json& body, const char* key) {
  auto it = body.find(key);
  if (it == body.end() || it->is_null()) return std::optional<uint64_t>();
  // Non-negative integers parse as unsigned; a signed one built in code is taken when >= 0.
  if (!it->is_number_integer() || (!it->is_number_unsigned() && it->get<int64_t>() < 0))
    return wrong_type(key, "an unsigned integer");
  return std::optional<uint64_t>(it->get<uint64_t>());
}

Failure invalid_domain(const std::string& text) { return {kEsrch, text + " is an invalid domain identifier"}; }

std::variant<DomainRef, Failure> domain_field(const Json& body, const char* key) {
  auto text = string_field(body, key);
  if (auto* failure = std::get_if<Failure>(&text)) return *failure;
  auto& value = std::get<std::optional<std::string>>(text);
  if (!value) return Failure{kEinval, std::string("missing \"") + key + "\""};
  DomainRef ref;
  ref.text = *value;
  if (auto number = decimal(*value)) {
    if (*number >= 0x7ff0) return invalid_domain(*value);  // DOMID_FIRST_RESERVED and above
    ref.domid = uint32_t(*number);
  }
  return ref;
}

std::optional<Action> parse_action(std::string_view text) {
  if (text == "destroy") return Action::destroy;
  if (text == "restart") return Action::restart;
  if (text == "preserve") return Action::preserve;
  return std::nullopt;
}

const char* action_name(Action action) {
  switch (action) {
    case Action::destroy: return "destroy";
    case Action::restart: return "restart";
    case Action::preserve: return "preserve";
  }
  return "destroy";
}

Failure name_in_use(const std::string& name) { return {kEexist, "Domain with name \"" + name + "\" already exists."}; }

std::variant<DomainConfig, Failure> resolve_config(const Json& config) {
  if (!config.is_object()) return Failure{kEinval, "\"config\" must be an object"};
  DomainConfig out;
  auto text = [&](const char* key, std::string& into, bool required) -> std::optional<Failure> {
    auto value = string_field(config, key);
    if (auto* failure = std::get_if<Failure>(&value)) return *failure;
    auto& got = std::get<std::optional<std::string>>(value);
    if (got) into = *got;
    if (required && into.empty()) {
      if (std::string_view(key) == "name") return Failure{kEinval, "Domain name must be specified."};
      return Failure{kEinval, std::string("no ") + key + " specified"};
    }
    return std::nullopt;
  };
  auto number = [&](const char* key, uint64_t& into) -> std::optional<Failure> {
    auto value = u64_field(config, key);
    if (auto* failure = std::get_if<Failure>(&value)) return *failure;
    if (auto& got = std::get<std::optional<uint64_t>>(value)) into = *got;
    return std::nullopt;
  };
  auto action = [&](const char* key, Action& into) -> std::optional<Failure> {
    std::string name;
    if (auto failure = text(key, name, false)) return failure;
    if (name.empty()) return std::nullopt;
    auto parsed = parse_action(name);
    if (!parsed) return Failure{kEinval, std::string("Unknown ") + key + " action \"" + name + "\" specified"};
    into = *parsed;
    return std::nullopt;
  };
  if (auto f = text("name", out.name, true)) return *f;
  if (out.name.size() > 64) return Failure{kEinval, "domain name longer than 64 characters"};
  for (char c : out.name)
    if (c == '/' || c == '\n' || c == '\0' || (unsigned char)c < 0x20)
      return Failure{kEinval, "domain name \"" + out.name + "\" has a character xl does not allow"};
  if (out.name == "Domain-0") return name_in_use(out.name);
  if (auto f = text("kernel", out.kernel, true)) return *f;
  if (auto f = text("ramdisk", out.ramdisk, false)) return *f;
  if (auto f = text("cmdline", out.cmdline, false)) return *f;
  uint64_t memory = 0, maxmem = 0, vcpus = 1, maxvcpus = 0;
  bool memory_given = config.contains("memory") && !config["memory"].is_null();
  if (auto f = number("memory", memory)) return *f;
  if (auto f = number("maxmem", maxmem)) return *f;
  if (auto f = number("vcpus", vcpus)) return *f;
  if (auto f = number("maxvcpus", maxvcpus)) return *f;
  if (memory_given) out.memory_mib = memory;
  if (out.memory_mib == 0 || out.memory_mib > (uint64_t(1) << 32))
    return Failure{kEinval, "memory must be at least 1 MiB"};
  out.maxmem_mib = maxmem ? maxmem : out.memory_mib;
  if (out.maxmem_mib < out.memory_mib) return Failure{kEinval, "maxmem is smaller than memory"};
  if (out.maxmem_mib > (uint64_t(1) << 32)) return Failure{kEinval, "maxmem too large"};
  // xl's rules; how many a domain may have is the hypervisor's to say (createdomain).
  if (vcpus == 0 || vcpus > 0xffffffffu) return Failure{kEinval, "vcpus must be at least 1"};
  if (maxvcpus == 0) maxvcpus = vcpus;
  if (maxvcpus < vcpus) return Failure{kEinval, "maxvcpus < vcpus"};
  if (maxvcpus > 0xffffffffu) return Failure{kEinval, "maxvcpus too large"};
  out.vcpus = uint32_t(vcpus);
  out.maxvcpus = uint32_t(maxvcpus);
  if (auto f = action("on_poweroff", out.on_poweroff)) return *f;
  if (auto f = action("on_reboot", out.on_reboot)) return *f;
  if (auto f = action("on_crash", out.on_crash)) return *f;
  if (auto f = text("uuid", out.uuid, false)) return *f;
  if (!out.uuid.empty()) {
    auto bytes = parse_uuid(out.uuid);
    if (!bytes) return Failure{kEinval, "Failed to parse UUID: " + out.uuid};
    out.uuid = format_uuid(*bytes);
  }
  if (auto f = text("ptwr_mode", out.ptwr_mode, false)) return *f;
  // cpus / cpus_soft: a string (every vCPU) or an array of strings (one per vCPU), xl's syntax.
  auto affinity = [&](const char* key, CpuAffinityText& into) -> std::optional<Failure> {
    auto it = config.find(key);
    if (it == config.end() || it->is_null()) return std::nullopt;
    into.given = true;
    auto check = [&](const Json& item) -> std::optional<Failure> {
      if (!item.is_string())
        return Failure{kEinval, std::string("\"") + key + "\" must be a string or a list of strings"};
      std::string error;
      if (!pvhv::xl::cfg::parse_cpu_range(item.get<std::string>(), pvhv::xl::cfg::kMaxCpusForSyntax, error))
        return Failure{kEinval, error};
      into.lists.push_back(item.get<std::string>());
      return std::nullopt;
    };
    if (!it->is_array()) return check(*it);
    into.per_vcpu = true;
    for (const Json& item : *it)
      if (auto f = check(item)) return f;
    return std::nullopt;
  };
  if (auto f = affinity("cpus", out.cpus)) return *f;
  if (auto f = affinity("cpus_soft", out.cpus_soft)) return *f;
  if (!out.ptwr_mode.empty() && out.ptwr_mode != "emulate" && out.ptwr_mode != "writable" &&
      out.ptwr_mode != "adaptive")
    return Failure{kEinval, "ptwr_mode must be emulate, writable or adaptive"};
  return out;
}

Json config_to_json(const DomainConfig& c) {
  Json j{{"name", c.name},
         {"kernel", c.kernel},
         {"cmdline", c.cmdline},
         {"memory", c.memory_mib},
         {"maxmem", c.maxmem_mib},
         {"vcpus", c.vcpus},
         {"maxvcpus", c.maxvcpus},
         {"on_poweroff", action_name(c.on_poweroff)},
         {"on_reboot", action_name(c.on_reboot)},
         {"on_crash", action_name(c.on_crash)},
         {"uuid", c.uuid}};
  if (!c.ramdisk.empty()) j["ramdisk"] = c.ramdisk;
  if (!c.ptwr_mode.empty()) j["ptwr_mode"] = c.ptwr_mode;
  auto affinity = [&](const char* key, const CpuAffinityText& a) {
    if (!a.given) return;
    if (!a.per_vcpu) {
      j[key] = a.lists.empty() ? std::string() : a.lists[0];
      return;
    }
    Json list = Json::array();
    for (const std::string& item : a.lists) list.push_back(item);
    j[key] = list;
  };
  affinity("cpus", c.cpus);
  affinity("cpus_soft", c.cpus_soft);
  return j;
}

std::optional<std::array<uint8_t, 16>> parse_uuid(std::string_view text) {
  // 8-4-4-4-12 hex digits (xl also accepts them without dashes: so do we).
  std::array<uint8_t, 16> bytes{};
  size_t nibble = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    bool dash_place = i == 8 || i == 13 || i == 18 || i == 23;
    if (c == '-' && dash_place && text.size() == 36) continue;
    int value = hex_digit(c);
    if (value < 0 || nibble >= 32) return std::nullopt;
    bytes[nibble / 2] = uint8_t(bytes[nibble / 2] | (nibble % 2 ? value : value << 4));
    ++nibble;
  }
  if (nibble != 32 || (text.size() != 32 && text.size() != 36)) return std::nullopt;
  return bytes;
}

std::string format_uuid(const std::array<uint8_t, 16>& b) {
  char text[40];
  std::snprintf(text, sizeof(text), "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return text;
}

std::string format_uuid(const uint8_t (&bytes)[16]) {
  std::array<uint8_t, 16> copy{};
  for (size_t i = 0; i < 16; ++i) copy[i] = bytes[i];
  return format_uuid(copy);
}

}  // namespace pvhv::daemon
