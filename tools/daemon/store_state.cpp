// A guest's part of the store, to a record and back (store_state.h).
#include "tools/daemon/store_state.h"

#include <string>
#include <vector>

namespace pvhv::daemon {
namespace {

std::optional<std::string> from_hex(const std::string& hex) {
  if (hex.size() % 2) return std::nullopt;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  std::string out;
  for (size_t i = 0; i < hex.size(); i += 2) {
    int hi = nibble(hex[i]), lo = nibble(hex[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(char(hi << 4 | lo));
  }
  return out;
}

void collect(const xenstore::Store& store, uint32_t domid, const std::string& home, const std::string& path,
             Json& nodes) {
  auto perms = store.get_perms(path);
  if (perms && !perms->empty() && (*perms)[0].domid == domid && path != home) {
    Json p = Json::array();
    for (const auto& perm : *perms) p.push_back(xenstore::format_perm(perm));
    nodes.push_back(
        {{"path", path.substr(home.size() + 1)}, {"value_hex", to_hex(store.read(path).value_or(""))}, {"perms", p}});
  }
  for (const auto& child : store.directory(path)) collect(store, domid, home, path + "/" + child, nodes);
}

}  // namespace

std::string to_hex(const std::string& bytes) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes) out += {digits[b >> 4], digits[b & 15]};
  return out;
}

Json guest_store_state(const xenstore::Store& store, xenstore::ConnId conn, uint32_t domid) {
  Json nodes = Json::array(), watches = Json::array();
  std::string home = xenstore::domain_path(domid);
  collect(store, domid, home, home, nodes);
  for (const auto& w : store.watches(conn)) watches.push_back({{"path", w.path}, {"token", w.token}});
  return {{"nodes", nodes}, {"watches", watches}};
}

void restore_guest_store_state(xenstore::Store& store, xenstore::ConnId conn, uint32_t domid, const Json& state) {
  if (!state.is_object()) return;
  std::string home = xenstore::domain_path(domid);
  auto nodes = state.find("nodes");
  if (nodes != state.end() && nodes->is_array()) {
    for (const auto& node : *nodes) {
      if (!node.is_object() || !node.contains("path") || !node["path"].is_string()) continue;
      if (!node.contains("value_hex") || !node["value_hex"].is_string()) continue;
      if (!node.contains("perms") || !node["perms"].is_array()) continue;
      std::string path = home + "/" + node["path"].get<std::string>();
      auto value = from_hex(node["value_hex"].get<std::string>());
      xenstore::Perms perms;
      for (const auto& p : node["perms"])
        if (auto perm = p.is_string() ? xenstore::parse_perm(p.get<std::string>()) : std::nullopt)
          perms.push_back(*perm);
      // Only what the guest could have made: below its home, owned by it.
      if (!value || perms.empty() || perms[0].domid != domid || !xenstore::is_valid_node_path(path)) continue;
      store.write(path, *value, &perms);
    }
  }
  auto watches = state.find("watches");
  if (watches != state.end() && watches->is_array()) {
    for (const auto& w : *watches) {
      if (!w.is_object() || !w.contains("path") || !w["path"].is_string() || !w.contains("token") ||
          !w["token"].is_string())
        continue;
      store.handle(conn,
                   xenstore::make_request(XS_WATCH, {w["path"].get<std::string>(), w["token"].get<std::string>()}));
    }
  }
  store.take_output(conn);
}

}  // namespace pvhv::daemon
