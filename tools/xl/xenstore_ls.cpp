// xenstore-ls's format (xenstore_ls.h).
#include "tools/xl/xenstore_ls.h"

#include <algorithm>
#include <climits>
#include <cstdio>

namespace pvhv::xl {
namespace {

constexpr int kDesiredWidth = 60;                // where -p's permissions start
constexpr std::string_view kTag = " = \"...\"";  // the room a value's quoting takes

std::string from_hex(const std::string& hex) {
  auto nibble = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) out.push_back(char(nibble(hex[i]) << 4 | nibble(hex[i + 1])));
  return out;
}

bool is_hex(const std::string& text) {
  if (text.size() % 2) return false;
  return std::all_of(text.begin(), text.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

}  // namespace

std::vector<StoreNode> store_nodes(const Json& nodes) {
  std::vector<StoreNode> out;
  if (!nodes.is_array()) return out;
  for (const auto& n : nodes) {
    if (!n.is_object()) continue;
    StoreNode node;
    auto depth = n.find("depth");
    auto name = n.find("name");
    if (depth == n.end() || !depth->is_number_integer() || name == n.end() || !name->is_string()) continue;
    node.depth = std::clamp(depth->get<int>(), 0, 4096);
    node.name = name->get<std::string>();
    if (auto path = n.find("path"); path != n.end() && path->is_string()) node.path = path->get<std::string>();
    if (auto hex = n.find("value_hex"); hex != n.end() && hex->is_string() && is_hex(hex->get<std::string>()))
      node.value = from_hex(hex->get<std::string>());
    if (auto perms = n.find("perms"); perms != n.end() && perms->is_array())
      for (const auto& p : *perms)
        if (p.is_string()) node.perms.push_back(p.get<std::string>());
    out.push_back(std::move(node));
  }
  return out;
}

std::string sanitise_value(std::string_view value) {
  std::string out;
  for (unsigned char c : value) {
    if (c >= ' ' && c <= '~' && c != '\\') {
      out.push_back(char(c));
      continue;
    }
    out.push_back('\\');
    if (c == '\t')
      out.push_back('t');
    else if (c == '\n')
      out.push_back('n');
    else if (c == '\r')
      out.push_back('r');
    else if (c == '\\')
      out.push_back('\\');
    else {
      char octal[4];
      std::snprintf(octal, sizeof octal, "%03o", c);
      out += octal;
    }
  }
  return out;
}

std::string format_xenstore_ls(const std::vector<StoreNode>& nodes, const LsOptions& options) {
  const int max_width = options.full_paths ? INT_MAX / 2 : options.max_width;
  const int desired = options.full_paths ? 0 : kDesiredWidth;
  const int tag = int(kTag.size());
  std::string out;
  for (const auto& node : nodes) {
    std::string line;
    if (options.full_paths) {
      line = node.path;
    } else {
      line.assign(size_t(node.depth), ' ');
      line += node.name.substr(0, size_t(std::max(0, max_width - tag - node.depth)));
    }
    if (!node.value) {
      out += line + ":\n";
      continue;
    }
    const std::string shown = sanitise_value(*node.value);
    const int width = int(line.size());
    if (max_width < width + int(node.value->size()) + tag) {  // Xen compares the raw length
      line += " = \"" + shown.substr(0, size_t(std::max(0, max_width - tag - width))) + "\\...\"";
    } else {
      line += " = \"" + shown + "\"";
      if (options.perms) {
        line += ' ';
        for (int column = int(line.size()); column < std::min(desired, max_width); ++column)
          line += (column & 1) ? '.' : ' ';
      }
    }
    if (options.perms) {
      line += "  (";
      for (size_t i = 0; i < node.perms.size(); ++i) line += (i ? "," : "") + node.perms[i];
      line += ")";
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace pvhv::xl
