// build/bin/xenstore-ls's output: Xen 4.17's xenstore-ls format (tools/xenstore/xenstore_client.c)
// for the nodes pvhvd's `xenstore_ls` answers. Pure: unit-tested in tests/unit/xl_xenstore_ls_test.cpp.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tools/xl/model.h"

namespace pvhv::xl {

struct StoreNode {
  int depth = 0;                     // 0 for the listed path's children
  std::string name;                  // the last path component
  std::string path;                  // absolute
  std::optional<std::string> value;  // none: unreadable (printed as "name:")
  std::vector<std::string> perms;    // "n0", "r3"...
};

// pvhvd's `nodes` array (entries that are not well formed are skipped).
std::vector<StoreNode> store_nodes(const Json& nodes);

// Printable ASCII as is; tab, newline, return and backslash as \t \n \r \\; other bytes \ooo.
std::string sanitise_value(std::string_view value);

struct LsOptions {
  bool perms = false;       // -p: the permissions after a dotted leader to column 60
  bool full_paths = false;  // -f: whole paths, no width limit
  int max_width = 80;       // a terminal's width - 2 when stdout is one (as Xen's)
};
// One line per node: indent by depth, `name = "value"`, a value that does not fit the width
// cut with `\...`.
std::string format_xenstore_ls(const std::vector<StoreNode>& nodes, const LsOptions& options);

}  // namespace pvhv::xl
