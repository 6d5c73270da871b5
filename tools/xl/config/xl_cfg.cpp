// The xl.cfg lexer and parser (see xl_cfg.h). The parser is hand-written but follows the
// decisions of Xen's LALR parser token by token, because the messages are part of the
// interface: where bison takes a default reduction before noticing an error, the "expecting"
// list is the one of the state it lands in (inside a list that is always `']'`; after a whole
// assignment it is `$end`, and that error cannot be recovered from).
#include "tools/xl/config/xl_cfg.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace pvhv::xl::cfg {

const Setting* Config::find(std::string_view name) const {
  for (auto it = settings.rbegin(); it != settings.rend(); ++it)
    if (it->name == name) return &*it;
  return nullptr;
}

namespace {

enum class Tok { kEnd, kIdent, kString, kNumber, kNewline, kAdd, kAssign, kSemicolon, kOpen, kClose, kComma };

// Bison's names for the tokens, in its symbol order (the order "expecting" lists use).
const char* token_name(Tok t) {
  switch (t) {
    case Tok::kEnd: return "$end";
    case Tok::kIdent: return "IDENT";
    case Tok::kString: return "STRING";
    case Tok::kNumber: return "NUMBER";
    case Tok::kNewline: return "NEWLINE";
    case Tok::kAdd: return "+=";
    case Tok::kAssign: return "'='";
    case Tok::kSemicolon: return "';'";
    case Tok::kOpen: return "'['";
    case Tok::kClose: return "']'";
    case Tok::kComma: return "','";
  }
  return "$undefined";
}

struct Token {
  Tok kind = Tok::kEnd;
  std::string text;   // the source text, as the error messages quote it
  std::string value;  // STRING: dequoted; IDENT / NUMBER: the text
  int line = 1;
  bool end_of_input = false;  // Xen quotes an empty token `' at the end of the input
};

// The shared state of one parse: messages, the first error, and the line of the last
// lexical error (Xen prints no further message for that line or the lines before it).
class Diagnostics {
 public:
  explicit Diagnostics(ParseResult& result) : result_(result) {}

  // Xen's yyerror: a message unless a lexical error was reported on this line already.
  void error(int line, std::string_view text, bool end_of_input, std::string_view message) {
    if (line <= lexical_error_line_) return;
    std::string newline;
    if (!text.empty() && text.back() == '\n') {
      text.remove_suffix(1);
      --line;  // Xen's own off-by-one for a token ending in a newline
      if (text.empty()) newline = "<newline>";
    }
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
    std::string near;
    if (!text.empty())
      near = "`" + std::string(text) + "'";
    else if (end_of_input)
      near = "`'";
    result_.report += result_.config.source + ":" + std::to_string(line) + ": config parsing error near " + near +
                      newline + ": " + std::string(message) + "\n";
    fail(EINVAL);
  }

  void lexical_error(int line, std::string_view text, std::string_view message) {
    error(line, text, false, message);
    lexical_error_line_ = line;
  }

  void fail(int error) {
    if (!result_.error) result_.error = error;
  }
  bool failed() const { return result_.error != 0; }
  void warn_python() { likely_python_ = true; }
  bool likely_python() const { return likely_python_; }

 private:
  ParseResult& result_;
  int lexical_error_line_ = -1;
  bool likely_python_ = false;
};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_lower(char c) { return c >= 'a' && c <= 'z'; }

// How many characters of `s` (at most `max`) strtoul(s, &ep, 10) would consume.
size_t decimal_prefix(std::string_view s, size_t max) {
  s = s.substr(0, max);
  size_t i = 0;
  while (i < s.size() && is_space(s[i])) ++i;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  size_t digits = i;
  while (digits < s.size() && is_digit(s[digits])) ++digits;
  return digits == i ? 0 : digits;
}

class Lexer {
 public:
  Lexer(std::string_view data, Diagnostics& diagnostics) : data_(data), diag_(diagnostics) {}

  Token next() {
    for (;;) {
      if (pos_ >= data_.size()) return end_token();
      const char c = data_[pos_];
      if (c == ' ' || c == '\t') {
        ++pos_;
        continue;
      }
      if (is_lower(c))
        return word(Tok::kIdent, [](char ch) { return is_lower(ch) || is_digit(ch) || ch == '.' || ch == '_'; });
      if (is_digit(c))
        return word(Tok::kNumber, [](char ch) { return is_digit(ch) || (ch >= 'a' && ch <= 'f') || ch == 'x'; });
      switch (c) {
        case ',': return single(Tok::kComma);
        case '[': return single(Tok::kOpen);
        case ']': return single(Tok::kClose);
        case ';': return single(Tok::kSemicolon);
        case '=': return single(Tok::kAssign);
        case '\n': return newline(1);
        case '#': {
          const size_t end = data_.find('\n', pos_);
          if (end != std::string_view::npos) return newline(end - pos_ + 1);
          break;  // a comment without its newline is not a comment to Xen's lexer
        }
        case '\'':
        case '"': {
          Token t;
          if (quoted(t)) return t;
          break;
        }
        case '+':
          if (pos_ + 1 < data_.size() && data_[pos_ + 1] == '=') {
            pos_ += 2;
            return made(Tok::kAdd, "+=");
          }
          break;
        default: break;
      }
      if (c == '+' || c == '-' || c == '.' || c == '(' || c == ')' || c == ':') diag_.warn_python();
      if (auto t = bad_characters()) return *t;
    }
  }

  int line() const { return line_; }
  const std::string& last_text() const { return last_text_; }

 private:
  Token made(Tok kind, std::string text) {
    Token t;
    t.kind = kind;
    t.value = text;
    t.text = std::move(text);
    t.line = line_;
    last_line_ = line_;
    last_text_ = t.text;
    return t;
  }
  Token single(Tok kind) { return made(kind, std::string(data_.substr(pos_++, 1))); }

  template <typename Pred>
  Token word(Tok kind, Pred more) {
    const size_t start = pos_++;
    while (pos_ < data_.size() && more(data_[pos_])) ++pos_;
    return made(kind, std::string(data_.substr(start, pos_ - start)));
  }

  // A NEWLINE token: `\n`, or a comment with its newline. Its line is the line it ends.
  Token newline(size_t length) {
    Token t;
    t.kind = Tok::kNewline;
    t.text = std::string(data_.substr(pos_, length));
    pos_ += length;
    t.line = line_;
    ++line_;
    last_line_ = t.line;
    last_text_ = t.text;
    return t;
  }

  Token end_token() {
    Token t;
    t.kind = Tok::kEnd;
    t.line = last_line_;
    t.end_of_input = true;
    return t;
  }

  // A quoted string on one line: backslash escapes any character but a newline. A NUL byte
  // ends the match here (Xen's lexer takes it and then trips over it): the quote is then a
  // lexical error, as an unterminated string is.
  bool quoted(Token& t) {
    const char quote = data_[pos_];
    size_t i = pos_ + 1;
    while (i < data_.size() && data_[i] != quote) {
      const char c = data_[i];
      if (c == '\n' || c == '\0') return false;
      if (c == '\\') {
        if (i + 1 >= data_.size() || data_[i + 1] == '\n' || data_[i + 1] == '\0') return false;
        ++i;
      }
      ++i;
    }
    if (i >= data_.size()) return false;
    const std::string_view raw = data_.substr(pos_, i + 1 - pos_);
    pos_ = i + 1;
    t = made(Tok::kString, std::string(raw));
    // As Xen, once anything has failed strings are no longer dequoted (nor their escapes checked).
    if (!diag_.failed()) t.value = dequote(raw.substr(1, raw.size() - 2), t.text);
    return true;
  }

  // Xen's escapes: \" \' \\ \a \b \f \n \r \t \v. Xen 4.17's numeric escapes never produce a
  // character: `\x` is always refused, and `\N` (N an octal digit) needs at least two more
  // decimal digits, which it swallows. Anything else after a backslash is refused.
  std::string dequote(std::string_view in, const std::string& token_text) {
    std::string out;
    for (size_t p = 0; p < in.size();) {
      const char c = in[p++];
      if (c != '\\') {
        out += c;
        continue;
      }
      const char nc = in[p++];
      switch (nc) {
        case '"':
        case '\'':
        case '\\': out += nc; continue;
        case 'a': out += '\a'; continue;
        case 'b': out += '\b'; continue;
        case 'f': out += '\f'; continue;
        case 'n': out += '\n'; continue;
        case 'r': out += '\r'; continue;
        case 't': out += '\t'; continue;
        case 'v': out += '\v'; continue;
        default: break;
      }
      if (nc == 'x') {
        escape_error(token_text, "invalid digit after backslash hexnumerical character escape in quoted string");
        return out;
      }
      if (nc >= '0' && nc <= '7') {
        // strncpy of 3 characters may take the closing quote along: it is not a digit.
        std::string window(in.substr(p, 3));
        if (window.size() < 3) window += '"';
        const size_t used = decimal_prefix(window, 3);
        if (used <= 1) {
          escape_error(token_text, "invalid digit after backslash octalnumerical character escape in quoted string");
          return out;
        }
        p += used;
        continue;
      }
      escape_error(token_text, "invalid character after backlash in quoted string");
      return out;
    }
    return out;
  }

  void escape_error(const std::string& text, const char* message) {
    diag_.lexical_error(line_, text, message);
    diag_.fail(EINVAL);
  }

  // Xen's error state: the offending character and what follows it up to a blank or a newline
  // are one lexical error; a newline there is still a NEWLINE token. At the end of the input
  // the error state ends silently.
  std::optional<Token> bad_characters() {
    const size_t start = pos_++;
    if (pos_ >= data_.size()) {
      Token end = end_token();
      end.text = std::string(data_.substr(start));  // Xen quotes the pending characters
      return end;
    }
    if (data_[pos_] == '\n') {
      ++pos_;
      ++line_;
      const std::string text(data_.substr(start, pos_ - start));
      diag_.lexical_error(line_, text, "lexical error");
      Token t;
      t.kind = Tok::kNewline;
      t.text = text;
      t.line = line_;
      last_line_ = line_;
      last_text_ = text;
      return t;
    }
    if (data_[pos_] == ' ' || data_[pos_] == '\t')
      ++pos_;
    else
      while (pos_ < data_.size() && data_[pos_] != ' ' && data_[pos_] != '\t' && data_[pos_] != '\n') ++pos_;
    last_text_ = std::string(data_.substr(start, pos_ - start));
    diag_.lexical_error(line_, last_text_, "lexical error");
    return std::nullopt;
  }

  std::string_view data_;
  Diagnostics& diag_;
  size_t pos_ = 0;
  int line_ = 1;
  int last_line_ = 1;
  std::string last_text_;
};

class Parser {
 public:
  Parser(std::string_view data, ParseResult& result) : result_(result), diag_(result), lexer_(data, diag_) {}

  void run() {
    for (;;) {
      const Token& t = peek();
      switch (t.kind) {
        case Tok::kEnd: return;
        case Tok::kNewline:
        case Tok::kSemicolon: shift(); continue;
        case Tok::kIdent:
          if (!statement()) return;
          continue;
        default:
          if (!syntax_error({Tok::kEnd, Tok::kIdent, Tok::kNewline, Tok::kSemicolon})) return;
          continue;
      }
    }
  }

  bool likely_python() const { return diag_.likely_python(); }

 private:
  const Token& peek() {
    if (!lookahead_) lookahead_ = lexer_.next();
    return *lookahead_;
  }
  Token shift() {
    Token t = peek();
    lookahead_.reset();
    if (error_status_) --error_status_;
    return t;
  }

  // Bison's message and recovery: the statement is abandoned up to its newline. Returns false
  // when the parse ends (the input ended while skipping).
  bool syntax_error(std::initializer_list<Tok> expected) {
    report_unexpected(expected);
    error_status_ = 3;
    for (;;) {
      const Token& t = peek();
      if (t.kind == Tok::kEnd) return false;
      if (t.kind == Tok::kNewline) {
        lookahead_.reset();
        error_status_ = 2;
        return true;
      }
      lookahead_.reset();
    }
  }

  void report_unexpected(std::initializer_list<Tok> expected) {
    if (error_status_) return;
    const Token& t = peek();
    std::string message = std::string("syntax error, unexpected ") + token_name(t.kind);
    const char* separator = ", expecting ";
    for (Tok e : expected) {
      message += separator;
      message += token_name(e);
      separator = " or ";
    }
    diag_.error(t.line, t.text, t.end_of_input, message);
  }

  // IDENT ('=' | '+=') value, then a newline, ';' or the end of the input.
  bool statement() {
    Token name = shift();
    const Tok op = peek().kind;
    if (op != Tok::kAssign && op != Tok::kAdd) return syntax_error({Tok::kAdd, Tok::kAssign});
    shift();
    std::optional<Value> value = parse_value();
    if (!value) return !aborted_ && recovered_;
    store(std::move(name.value), op == Tok::kAdd, std::move(*value));
    const Token& end = peek();
    if (end.kind == Tok::kNewline || end.kind == Tok::kSemicolon) {
      shift();
      return true;
    }
    if (end.kind == Tok::kEnd) return false;
    // Bison has already reduced the whole file here: only the end was acceptable, and there
    // is no state left to recover in.
    report_unexpected({Tok::kEnd});
    return false;
  }

  // An atom, or a list read iteratively (nesting depth is the caller's to choose).
  std::optional<Value> parse_value() {
    recovered_ = false;
    const Token& first = peek();
    if (first.kind == Tok::kString || first.kind == Tok::kNumber) {
      Token t = shift();
      Value v;
      v.string = std::move(t.value);
      v.line = t.line;
      return v;
    }
    if (first.kind != Tok::kOpen) {
      recovered_ = syntax_error({Tok::kString, Tok::kNumber, Tok::kOpen});
      return std::nullopt;
    }
    std::vector<Value> open;  // the lists being read, innermost last
    auto open_list = [&] {
      Token t = shift();
      Value list;
      list.kind = Value::Kind::kList;
      list.line = t.line;
      open.push_back(std::move(list));
    };
    open_list();
    bool after_value = false;  // a value was just read: ',' or ']' next
    for (;;) {
      const Token& t = peek();
      if (t.kind == Tok::kNewline) {
        shift();
        continue;
      }
      if (t.kind == Tok::kClose) {
        shift();
        Value done = std::move(open.back());
        open.pop_back();
        if (open.empty()) return done;
        open.back().list.push_back(std::move(done));
        after_value = true;
        continue;
      }
      if (after_value && t.kind == Tok::kComma) {
        shift();
        after_value = false;
        continue;
      }
      if (!after_value && (t.kind == Tok::kString || t.kind == Tok::kNumber)) {
        Token atom = shift();
        Value v;
        v.string = std::move(atom.value);
        v.line = atom.line;
        open.back().list.push_back(std::move(v));
        after_value = true;
        continue;
      }
      if (!after_value && t.kind == Tok::kOpen) {
        if (static_cast<int>(open.size()) >= kMaxListDepth) {
          diag_.error(t.line, t.text, t.end_of_input, "memory exhausted");
          diag_.fail(EINVAL);
          aborted_ = true;
          return std::nullopt;
        }
        open_list();
        continue;
      }
      recovered_ = syntax_error({Tok::kClose});
      return std::nullopt;
    }
  }

  // Xen stores nothing once anything has failed. `+=` joins the previous value of the same
  // name (string to string, list to list); with no previous value it is an assignment.
  void store(std::string name, bool added, Value value) {
    if (diag_.failed()) return;
    if (added) {
      if (const Setting* previous = result_.config.find(name)) {
        if (previous->value.kind != value.kind) {
          diag_.lexical_error(lexer_.line(), lexer_.last_text(), "can't add [list] to \"string\" or vice versa");
          diag_.fail(EINVAL);
          return;
        }
        if (value.is_list()) {
          std::vector<Value> joined = previous->value.list;
          for (Value& v : value.list) joined.push_back(std::move(v));
          value.list = std::move(joined);
        } else {
          value.string = previous->value.string + value.string;
        }
      }
    }
    Setting s;
    s.name = std::move(name);
    s.line = value.line;
    s.added = added;
    s.value = std::move(value);
    result_.config.settings.push_back(std::move(s));
  }

  ParseResult& result_;
  Diagnostics diag_;
  Lexer lexer_;
  std::optional<Token> lookahead_;
  int error_status_ = 0;  // bison's yyerrstatus: tokens to read before the next message
  bool recovered_ = false;
  bool aborted_ = false;
};

std::string where(const Config& config, const Setting& s) { return config.source + ":" + std::to_string(s.line); }

}  // namespace

ParseResult parse(std::string_view source, std::string_view data) {
  ParseResult result;
  result.config.source = std::string(source);
  Parser parser(data, result);
  parser.run();
  if (!result.ok() && parser.likely_python())
    result.report +=
        "warning: Config file looks like it contains Python code.\n"
        "warning:  Arbitrary Python is no longer supported.\n"
        "warning:  See https://wiki.xen.org/wiki/PythonInXlConfig\n";
  return result;
}

Lookup get_string(const Config& config, std::string_view name, std::string& value, std::string& report) {
  const Setting* s = config.find(name);
  if (!s) return Lookup::kAbsent;
  if (s->value.is_list()) {
    report +=
        where(config, *s) + ": warning: parameter `" + std::string(name) + "' is a list but should be a single value\n";
    return Lookup::kWrongType;
  }
  value = s->value.string;
  return Lookup::kFound;
}

Lookup get_long(const Config& config, std::string_view name, long& value, std::string& report) {
  std::string text;
  const Lookup found = get_string(config, name, text, report);
  if (found != Lookup::kFound) return found;
  const Setting& s = *config.find(name);
  const std::string prefix = where(config, s) + ": warning: ";
  if (s.added) {
    report += prefix + "can't use += with numbers for parameter `" + std::string(name) + "'\n";
    return Lookup::kWrongType;
  }
  errno = 0;
  char* end = nullptr;
  const long l = std::strtol(text.c_str(), &end, 0);
  if (errno) {
    report += prefix + "parameter `" + std::string(name) +
              "' could not be parsed as a number: " + std::strerror(errno) + "\n";
    return Lookup::kWrongType;
  }
  if (*end || end == text.c_str()) {
    report += prefix + "parameter `" + std::string(name) + "' is not a valid number\n";
    return Lookup::kWrongType;
  }
  value = l;
  return Lookup::kFound;
}

}  // namespace pvhv::xl::cfg
