// The xl.cfg language as Xen 4.17's libxlutil reads it (tools/libs/util/libxlu_cfg*), written
// from its behaviour: `KEY = VALUE` / `KEY += VALUE` statements ended by a newline or `;`,
// `#` comments, values that are atoms (quoted strings with backslash escapes, or numbers, both
// kept as text) or lists `[ ... ]` (nested, trailing comma, newlines allowed inside). The last
// assignment of a key wins. Errors are reported with Xen's text,
// `FILE:LINE: config parsing error near `TOKEN': MESSAGE`, including bison's "syntax error,
// unexpected X, expecting Y" forms, the off-by-one line Xen reports for an unexpected newline,
// and its error recovery (skip to the end of the line, no new message until three tokens have
// been read). Pure: no I/O; every message goes into `ParseResult::report`.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pvhv::xl::cfg {

struct Value {
  enum class Kind { kString, kList };
  Kind kind = Kind::kString;
  std::string string;       // kString: the dequoted text (a number stays text, as in Xen)
  std::vector<Value> list;  // kList
  int line = 0;             // where the value starts
  bool is_list() const { return kind == Kind::kList; }
};

struct Setting {
  std::string name;
  Value value;
  bool added = false;  // written with `+=` (Xen refuses += for numbers)
  int line = 0;
};

struct Config {
  std::string source;             // the file name messages start with
  std::vector<Setting> settings;  // in file order; the last one of a name is the one in force
  const Setting* find(std::string_view name) const;
};

struct ParseResult {
  Config config;
  int error = 0;       // 0, or Xen's errno for the failure (EINVAL; ERANGE when a list grows too large)
  std::string report;  // every message, one per line, as xl prints them on stderr
  bool ok() const { return error == 0; }
};

// The deepest list nesting accepted; deeper input fails as bison's stack overflow does.
inline constexpr int kMaxListDepth = 4096;

ParseResult parse(std::string_view source, std::string_view data);

// Xen's typed getters (xlu_cfg_get_string / _get_long / _get_list): they warn into `report`
// when the key holds the wrong type and then behave as if it were absent.
enum class Lookup { kFound, kAbsent, kWrongType };
Lookup get_string(const Config& config, std::string_view name, std::string& value, std::string& report);
Lookup get_long(const Config& config, std::string_view name, long& value, std::string& report);

}  // namespace pvhv::xl::cfg
