// GNU-style option parsing with xl's refusals (see options.h).
#include "tools/xl/options.h"

#include <cctype>
#include <cstdlib>
#include <cstring>

namespace pvhv::xl {

bool ParsedOptions::has(char c) const { return count(c) > 0; }

int ParsedOptions::count(char c) const {
  int n = 0;
  for (const auto& o : options) n += o.first == c;
  return n;
}

std::optional<std::string> ParsedOptions::value(char c) const {
  std::optional<std::string> v;
  for (const auto& o : options)
    if (o.first == c) v = o.second;
  return v;
}

namespace {

// Whether `c` is in optstring and takes an argument ("f:").
std::optional<bool> short_option(std::string_view optstring, char c) {
  const size_t at = optstring.find(c);
  if (c == ':' || at == std::string_view::npos) return std::nullopt;
  return at + 1 < optstring.size() && optstring[at + 1] == ':';
}

}  // namespace

ParsedOptions parse_options(const std::vector<std::string>& args, std::string_view optstring,
                            const std::vector<LongOption>& long_options) {
  ParsedOptions p;
  auto reject = [&](char c) {
    if (c == 'h')
      p.help = true;
    else if (!p.rejected)
      p.rejected = c;
  };
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      for (++i; i < args.size(); ++i) p.operands.push_back(args[i]);
      break;
    }
    if (a.size() < 2 || a[0] != '-') {
      p.operands.push_back(a);
      continue;
    }
    if (a[1] == '-') {
      const std::string body = a.substr(2);
      const size_t eq = body.find('=');
      const std::string name = body.substr(0, eq);
      const LongOption* found = nullptr;
      for (const LongOption& o : long_options)
        if (o.name == name) found = &o;
      if (!found && name == "help") {
        p.help = true;
        continue;
      }
      if (!found) {
        reject('\0');
        continue;
      }
      if (found->has_argument) {
        if (eq != std::string::npos)
          p.options.emplace_back(found->short_name, body.substr(eq + 1));
        else if (i + 1 < args.size())
          p.options.emplace_back(found->short_name, args[++i]);
        else
          reject(found->short_name);
      } else if (eq != std::string::npos) {
        reject(found->short_name);
      } else {
        p.options.emplace_back(found->short_name, "");
      }
      continue;
    }
    for (size_t j = 1; j < a.size(); ++j) {
      const char c = a[j];
      const std::optional<bool> takes = short_option(optstring, c);
      if (!takes) {
        reject(c);
        continue;
      }
      if (!*takes) {
        p.options.emplace_back(c, "");
        continue;
      }
      if (j + 1 < a.size())
        p.options.emplace_back(c, a.substr(j + 1));
      else if (i + 1 < args.size())
        p.options.emplace_back(c, args[++i]);
      else
        reject(c);
      break;
    }
  }
  if (!p.help)
    for (const auto& o : p.options) p.help = p.help || o.first == 'h';
  return p;
}

std::optional<Refusal> check_options(const ParsedOptions& parsed, std::string_view command, int required) {
  if (parsed.rejected) {
    std::string letter = *parsed.rejected ? std::string(1, *parsed.rejected) : std::string();
    return Refusal{"option `" + letter + "' not supported.\n", 2, false};
  }
  if (parsed.help) return Refusal{"", 0, true};
  if (static_cast<int>(parsed.operands.size()) < required)
    return Refusal{"'xl " + std::string(command) + "' requires at least " + std::to_string(required) + " argument" +
                       (required > 1 ? "s" : "") + ".\n\n",
                   2, true};
  return std::nullopt;
}

}  // namespace pvhv::xl

namespace pvhv::xl {

long long parse_mem_size_kb(std::string_view text) {
  const std::string s(text);
  char* end = nullptr;
  long long kb = std::strtoll(s.c_str(), &end, 10);
  if (std::strlen(end) > 1) return -1;
  switch (std::tolower(static_cast<unsigned char>(*end))) {
    case 't': kb <<= 10; [[fallthrough]];
    case 'g': kb <<= 10; [[fallthrough]];
    case '\0':
    case 'm': kb <<= 10; [[fallthrough]];
    case 'k': break;
    case 'b': kb >>= 10; break;
    default: return -1;
  }
  return kb;
}

}  // namespace pvhv::xl
