// xl's per-command option parsing: GNU getopt_long's rules (options and operands in any order,
// grouped short options, `-fFILE` / `-f FILE`, `--name` / `--name=value`, `--` ends options)
// and Xen 4.17 xl's answers to bad options (def_getopt): `-h` / `--help` is help, anything
// else unknown is "option `X' not supported." with status 2, too few operands is
// "'xl CMD' requires at least N argument(s)." with status 2. Pure.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pvhv::xl {

struct LongOption {
  std::string_view name;
  bool has_argument;
  char short_name;
};

struct ParsedOptions {
  std::vector<std::pair<char, std::string>> options;  // in command-line order
  std::vector<std::string> operands;
  bool help = false;             // -h or --help: print the command's help, status 0
  std::optional<char> rejected;  // the option xl does not support ('\0' for an unknown long one)
  bool has(char c) const;
  int count(char c) const;
  std::optional<std::string> value(char c) const;  // the last value given
};

ParsedOptions parse_options(const std::vector<std::string>& args, std::string_view optstring,
                            const std::vector<LongOption>& long_options);

// The message and status for a parse that must stop (nullopt: go on). `required` operands.
struct Refusal {
  std::string message;
  int status;
  bool show_help;
};
std::optional<Refusal> check_options(const ParsedOptions& parsed, std::string_view command, int required);

}  // namespace pvhv::xl

namespace pvhv::xl {

// Xen's parse_mem_size_kb: a decimal number of MiB, or with one suffix b, k, m, g, t (any
// case). -1 when malformed.
long long parse_mem_size_kb(std::string_view text);

}  // namespace pvhv::xl
