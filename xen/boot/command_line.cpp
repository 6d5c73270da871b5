#include "boot/command_line.h"

#include "common/format.h"

namespace boot {

namespace {

// A piece of the command line; never NUL-terminated, so it is always passed with its length.
struct Text {
  const char* data = nullptr;
  size_t length = 0;

  constexpr bool empty() const { return length == 0; }
  constexpr char at(size_t i) const { return data[i]; }
  constexpr bool equals(const char* word) const {
    size_t i = 0;
    for (; word[i] != 0; ++i)
      if (i >= length || data[i] != word[i]) return false;
    return i == length;
  }
  constexpr bool starts_with(const char* prefix) const {
    for (size_t i = 0; prefix[i] != 0; ++i)
      if (i >= length || data[i] != prefix[i]) return false;
    return true;
  }
  constexpr Text from(size_t offset) const {
    return offset >= length ? Text{data + length, 0} : Text{data + offset, length - offset};
  }
  constexpr Text until(size_t end) const { return Text{data, end < length ? end : length}; }
  constexpr size_t find(char c) const {
    for (size_t i = 0; i < length; ++i)
      if (data[i] == c) return i;
    return length;
  }
};

constexpr bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

constexpr int digit_value(char c, unsigned base) {
  int value = c >= '0' && c <= '9'   ? c - '0'
              : c >= 'a' && c <= 'z' ? c - 'a' + 10
              : c >= 'A' && c <= 'Z' ? c - 'A' + 10
                                     : 99;
  return value < int(base) ? value : -1;
}

// Parses an unsigned number with C's base prefixes (0x hex, leading 0 octal), as Xen's
// simple_strtoull(..., 0) does. Returns how many characters were used, 0 if none or overflow.
size_t parse_number(Text text, uint64_t& value) {
  unsigned base = 10;
  size_t i = 0;
  if (text.starts_with("0x") || text.starts_with("0X")) {
    base = 16;
    i = 2;
    if (text.length < 3 || digit_value(text.at(2), 16) < 0) return 0;
  } else if (text.starts_with("0")) {
    base = 8;
  }
  uint64_t result = 0;
  size_t first = i;
  for (; i < text.length && digit_value(text.at(i), base) >= 0; ++i) {
    uint64_t digit = uint64_t(digit_value(text.at(i), base));
    if (result > (~uint64_t(0) - digit) / base) return 0;
    result = result * base + digit;
  }
  if (i == first) return 0;
  value = result;
  return i;
}

// The shift for a unit letter; no letter means KiB. Sets `consumed` if a letter was used.
unsigned unit_shift(Text rest, bool& consumed) {
  consumed = !rest.empty();
  switch (rest.empty() ? 0 : rest.at(0)) {
    case 'T':
    case 't': return 40;
    case 'G':
    case 'g': return 30;
    case 'M':
    case 'm': return 20;
    case 'K':
    case 'k': return 10;
    case 'B':
    case 'b': return 0;
    default: consumed = false; return 10;
  }
}

// Number plus optional unit; returns characters used (0 on error).
size_t parse_size_prefix(Text text, uint64_t& bytes) {
  uint64_t number = 0;
  size_t used = parse_number(text, number);
  if (used == 0) return 0;
  bool consumed = false;
  unsigned shift = unit_shift(text.from(used), consumed);
  if (shift != 0 && number > (~uint64_t(0) >> shift)) return 0;
  bytes = number << shift;
  return used + (consumed ? 1 : 0);
}

bool parse_percent(Text text, uint32_t& percent) {
  uint64_t value = 0;
  size_t used = parse_number(text, value);
  if (used == 0 || used + 1 != text.length || text.at(used) != '%' || value >= 100) return false;
  percent = uint32_t(value);
  return true;
}

// `[-]<size>` | `<frac>%` | `<size>+<frac>%`
bool parse_memory_amount(Text text, MemoryAmount& amount) {
  if (text.empty()) return false;
  MemoryAmount parsed;
  if (text.starts_with("-")) {
    parsed.all_but = true;
    text = text.from(1);
    if (text.empty()) return false;  // "-" alone names no amount
  }
  if (text.find('%') < text.length) {
    size_t plus = text.find('+');
    if (plus < text.length) {
      Text size = text.until(plus);
      if (size.empty() || parse_size_prefix(size, parsed.bytes) != size.length) return false;
      text = text.from(plus + 1);
    }
    if (!parse_percent(text, parsed.percent)) return false;
  } else if (parse_size_prefix(text, parsed.bytes) != text.length) {
    return false;
  }
  amount = parsed;
  return true;
}

// A plain size below one page gives dom0 no memory at all (Xen's pages are 4 KiB, and it
// silently takes such an amount as unset): refused, so the default applies with a warning.
constexpr bool is_below_a_page(const MemoryAmount& amount) {
  return !amount.all_but && amount.percent == 0 && amount.bytes < 4096;
}

bool parse_dom0_memory(Text value, Dom0MemorySpec& spec) {
  Dom0MemorySpec parsed = spec;
  while (true) {
    size_t comma = value.find(',');
    Text item = value.until(comma);
    if (item.starts_with("min:")) {
      if (!parse_memory_amount(item.from(4), parsed.min)) return false;
      parsed.has_min = true;
    } else if (item.starts_with("max:")) {
      if (!parse_memory_amount(item.from(4), parsed.max) || is_below_a_page(parsed.max)) return false;
      parsed.has_max = true;
    } else {
      if (!parse_memory_amount(item, parsed.amount) || is_below_a_page(parsed.amount)) return false;
      parsed.has_amount = true;
    }
    if (comma == value.length) break;
    value = value.from(comma + 1);
  }
  spec = parsed;
  return true;
}

constexpr const char* log_level_names[] = {"none", "error", "warning", "info", "debug", "all"};

bool parse_log_level_name(Text text, LogLevel& level) {
  for (unsigned i = 0; i < sizeof(log_level_names) / sizeof(log_level_names[0]); ++i)
    if (text.equals(log_level_names[i])) {
      level = LogLevel(i);
      return true;
    }
  return false;
}

// `<level>[/<rate-limited level>]`; the rate-limited level is never below the first.
bool parse_log_levels(Text value, LogLevel& level, LogLevel& rate_limited) {
  size_t slash = value.find('/');
  LogLevel lower = level, upper = rate_limited;
  if (!parse_log_level_name(value.until(slash), lower)) return false;
  upper = lower;
  if (slash < value.length && !parse_log_level_name(value.from(slash + 1), upper)) return false;
  if (upper < lower) upper = lower;
  level = lower;
  rate_limited = upper;
  return true;
}

bool parse_ptwr(Text value, PtwrMode& mode) {
  if (value.equals("emulate"))
    mode = PtwrMode::emulate;
  else if (value.equals("writable"))
    mode = PtwrMode::writable;
  else if (value.equals("adaptive"))
    mode = PtwrMode::adaptive;
  else
    return false;
  return true;
}

bool parse_selftest(Text value, HypervisorSelftest& selftest) {
  if (value.equals("none"))
    selftest = HypervisorSelftest::none;
  else if (value.equals("hypervisor-fault"))
    selftest = HypervisorSelftest::hypervisor_fault;
  else if (value.equals("stack-overflow"))
    selftest = HypervisorSelftest::stack_overflow;
  else if (value.equals("syscall-entry-debug"))
    selftest = HypervisorSelftest::syscall_entry_debug;
  else if (value.equals("ap-fault"))
    selftest = HypervisorSelftest::ap_fault;
  else if (value.equals("bsp-fault"))
    selftest = HypervisorSelftest::bsp_fault;
  else if (value.equals("ap-hang"))
    selftest = HypervisorSelftest::ap_hang;
  else if (value.equals("ipi"))
    selftest = HypervisorSelftest::ipi;
  else if (value.equals("ipi-unlocked"))
    selftest = HypervisorSelftest::ipi_unlocked;
  else if (value.equals("lock-order"))
    selftest = HypervisorSelftest::lock_order;
  else if (value.equals("lock-recursion"))
    selftest = HypervisorSelftest::lock_recursion;
  else
    return false;
  return true;
}

bool copy_console(Text value, CommandLine& out) {
  if (value.empty() || value.length >= CommandLine::console_capacity) return false;
  for (size_t i = 0; i < CommandLine::console_capacity; ++i) out.console[i] = i < value.length ? value.at(i) : 0;
  out.has_console = true;
  return true;
}

// Copies `text` into a fixed buffer, NUL-terminated; true if it had to be cut.
template <size_t capacity>
bool copy_truncated(Text text, char (&out)[capacity]) {
  for (size_t i = 0; i < capacity; ++i) out[i] = i < text.length && i + 1 < capacity ? text.at(i) : 0;
  return text.length >= capacity;
}

void report(CommandLine& out, CommandLineDiagnostic::Kind kind, Text word, const char* message) {
  if (out.diagnostic_count == CommandLine::max_diagnostics) {
    ++out.dropped_diagnostics;
    return;
  }
  CommandLineDiagnostic& diagnostic = out.diagnostics[out.diagnostic_count++];
  size_t equals = word.find('=');
  diagnostic.kind = kind;
  diagnostic.message = message;
  diagnostic.has_value = equals < word.length;
  copy_truncated(word.until(equals), diagnostic.key);
  diagnostic.value_truncated = copy_truncated(word.from(equals + 1), diagnostic.value);
}

// A whole unsigned 32-bit number (Xen's simple_strtoul bases: 0x hex, leading 0 octal).
bool parse_count(Text text, uint32_t& count) {
  uint64_t value = 0;
  if (text.empty() || parse_number(text, value) != text.length || value > ~uint32_t(0)) return false;
  count = uint32_t(value);
  return true;
}

// dom0_max_vcpus=: `N`, `N-`, `N-M` or `-M` (Xen's parse_dom0_max_vcpus; N of 0 means 1).
bool parse_dom0_vcpus(Text value, Dom0VcpusSpec& out) {
  Dom0VcpusSpec spec;
  const size_t dash = value.find('-');
  if (dash == 0) {
    if (!parse_count(value.from(1), spec.max)) return false;
  } else {
    if (!parse_count(value.until(dash), spec.min)) return false;
    if (spec.min == 0) spec.min = 1;
    if (dash == value.length)
      spec.max = spec.min;
    else if (dash + 1 < value.length && !parse_count(value.from(dash + 1), spec.max))
      return false;
  }
  out = spec;
  return true;
}

// Applies one `key=value` or `flag` word.
void apply_option(Text word, CommandLine& out) {
  size_t equals = word.find('=');
  Text key = word.until(equals);
  Text value = word.from(equals + 1);
  bool has_value = equals < word.length;
  bool ok = true;
  if (key.equals("loglvl")) {
    ok = has_value && parse_log_levels(value, out.log_level, out.rate_limited_log_level);
    if (!ok)
      report(out, CommandLineDiagnostic::Kind::bad_value, word, "expected none|error|warning|info|debug|all[/level]");
  } else if (key.equals("dom0_mem")) {
    ok = has_value && parse_dom0_memory(value, out.dom0_memory);
    if (!ok)
      report(out, CommandLineDiagnostic::Kind::bad_value, word,
             "expected [min:|max:][-]<size>[,...] of at least 4K, size like 128M or 1G+25%");
  } else if (key.equals("domU_mem")) {
    uint64_t bytes = 0;
    ok = has_value && parse_size(value.data, value.length, bytes) && bytes >= kMinDomuMemoryBytes;
    if (ok) out.domu_memory_bytes = bytes;
    if (!ok) report(out, CommandLineDiagnostic::Kind::bad_value, word, "expected a size of at least 4M, like 64M");
  } else if (key.equals("dom0_max_vcpus")) {
    ok = has_value && parse_dom0_vcpus(value, out.dom0_vcpus);
    if (!ok) report(out, CommandLineDiagnostic::Kind::bad_value, word, "expected N, N-, N-M or -M vCPUs");
  } else if (key.equals("domU_max_vcpus")) {
    uint32_t count = 0;
    ok = has_value && parse_count(value, count) && count >= 1 && count <= kMaxDomuVcpus;
    if (ok) out.domu_vcpus = count;
    if (!ok) report(out, CommandLineDiagnostic::Kind::bad_value, word, "expected a number of vCPUs from 1 to 8");
  } else if (key.equals("ptwr")) {
    ok = has_value && parse_ptwr(value, out.ptwr);
    if (!ok) report(out, CommandLineDiagnostic::Kind::bad_value, word, "expected emulate|writable|adaptive");
  } else if (key.equals("instruction_cache")) {
    ok = has_value && (value.equals("0") || value.equals("1"));
    if (ok) out.instruction_cache = value.equals("1");
    if (!ok) report(out, CommandLineDiagnostic::Kind::bad_value, word, "expected 0|1");
  } else if (key.equals("dom0_vcpus_pin")) {
    ok = !has_value;
    if (ok) out.dom0_vcpus_pin = true;
    if (!ok) report(out, CommandLineDiagnostic::Kind::bad_value, word, "takes no value");
  } else if (key.equals("sched_smp")) {
    ok = has_value && (value.equals("0") || value.equals("1"));
    if (ok) out.sched_smp = value.equals("1");
    if (!ok) report(out, CommandLineDiagnostic::Kind::bad_value, word, "expected 0|1");
  } else if (key.equals("selftest")) {
    ok = has_value && parse_selftest(value, out.selftest);
    if (!ok)
      report(out, CommandLineDiagnostic::Kind::bad_value, word,
             "expected "
             "none|hypervisor-fault|stack-overflow|syscall-entry-debug|ap-fault|bsp-fault|ap-hang|ipi|ipi-unlocked|"
             "lock-order|lock-recursion");
  } else if (key.equals("maxcpus")) {
    uint64_t count = 0;
    ok = has_value && !value.empty() && parse_number(value, count) == value.length && count >= 1 && count <= 4096;
    if (ok) out.max_cpus = unsigned(count);
    if (!ok) report(out, CommandLineDiagnostic::Kind::bad_value, word, "expected a number of CPUs from 1");
  } else if (key.equals("console")) {
    ok = has_value && copy_console(value, out);
    if (!ok)
      report(out, CommandLineDiagnostic::Kind::bad_value, word,
             "expected a non-empty device list of at most 63 characters");
  } else {
    report(out, CommandLineDiagnostic::Kind::unknown_option, word, "unknown option");
  }
}

}  // namespace

size_t format_diagnostic(const CommandLineDiagnostic& diagnostic, char* out, size_t capacity) {
  if (diagnostic.kind == CommandLineDiagnostic::Kind::unknown_option)
    return format_to(out, capacity, "parameter \"%s\" unknown: ignored", diagnostic.key);
  if (!diagnostic.has_value)
    return format_to(out, capacity, "parameter \"%s\" needs a value (%s): ignored", diagnostic.key, diagnostic.message);
  return format_to(out, capacity, "parameter \"%s\" has invalid value \"%s%s\" (%s): ignored", diagnostic.key,
                   diagnostic.value, diagnostic.value_truncated ? "..." : "", diagnostic.message);
}

const char* log_level_name(LogLevel level) {
  unsigned index = unsigned(level);
  return index < sizeof(log_level_names) / sizeof(log_level_names[0]) ? log_level_names[index] : "?";
}

uint64_t Dom0MemorySpec::resolve(uint64_t available_bytes, uint64_t default_bytes) const {
  uint64_t size = has_amount ? amount.resolve(available_bytes) : default_bytes;
  if (has_min && size < min.resolve(available_bytes)) size = min.resolve(available_bytes);
  if (has_max && size > max.resolve(available_bytes)) size = max.resolve(available_bytes);
  return size < available_bytes ? size : available_bytes;
}

bool parse_size(const char* text, size_t length, uint64_t& bytes) {
  Text whole{text, length};
  uint64_t parsed = 0;
  if (length == 0 || parse_size_prefix(whole, parsed) != length) return false;
  bytes = parsed;
  return true;
}

void parse_command_line(const char* text, size_t length, CommandLine& out) {
  size_t end = 0;
  while (end < length && text[end] != 0) ++end;
  Text line{text, end};
  size_t i = 0;
  while (i < line.length) {
    while (i < line.length && is_space(line.at(i))) ++i;
    size_t start = i;
    while (i < line.length && !is_space(line.at(i))) ++i;
    if (i > start) apply_option(Text{line.data + start, i - start}, out);
  }
}

const char* skip_image_name(const char* text) {
  while (is_space(*text)) ++text;
  while (*text != 0 && !is_space(*text)) ++text;
  while (is_space(*text)) ++text;
  return text;
}

}  // namespace boot
