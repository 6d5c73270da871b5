// Options of the fuzzing domain (fuzz=<seed> and the fuzz_* words of the command line).
#include "lib/cmdline.h"
#include "fuzz/generator/fuzz_model.h"

#include "common/format.h"

namespace lib::fuzz {
namespace {

const char* const kFeatureNames[kFeatureCount] = {"call",
                                                  "mmu",
                                                  "mmuext",
                                                  "va",
                                                  "multicall",
                                                  "ptwrite",
                                                  "touch",
                                                  "iret",
                                                  "rflags",
                                                  "sched",
                                                  "ports",
                                                  "insn",
                                                  "hv_frames",
                                                  "destroy",
                                                  "rax_high",
                                                  "nested",
                                                  "nt",
                                                  "tf",
                                                  "iret_selectors",
                                                  "iret_rip",
                                                  "iret_rsp",
                                                  "io",
                                                  "hypervisor_ptr",
                                                  "fuzz_area_ptr",
                                                  "console",
                                                  "huge_count",
                                                  "base",
                                                  "foreign",
                                                  "hypervisor_slots",
                                                  "huge_timers",
                                                  "alias"};

bool parse_feature_word(const char* word, size_t length, unsigned& feature) {
  for (unsigned i = 0; i < kFeatureCount; ++i) {
    const char* name = kFeatureNames[i];
    size_t n = 0;
    while (name[n] && n < length && name[n] == word[n]) ++n;
    if (n == length && name[n] == 0) {
      feature = i;
      return true;
    }
  }
  return false;
}

// "A-B" (inclusive) or a single operation number.
bool parse_range(const char* text, uint64_t& from, uint64_t& to) {
  char first[32];
  size_t i = 0;
  while (text[i] && text[i] != '-' && i + 1 < sizeof(first)) {
    first[i] = text[i];
    ++i;
  }
  first[i] = 0;
  if (!parse_number(first, from)) return false;
  if (text[i] != '-') {
    to = from;
    return true;
  }
  return parse_number(text + i + 1, to) && to >= from;
}

}  // namespace

const char* feature_name(Feature feature) { return feature < kFeatureCount ? kFeatureNames[feature] : "?"; }

bool parse_features(const char* text, uint64_t& mask, const char** unknown) {
  mask = 0;
  while (*text) {
    size_t length = 0;
    while (text[length] && text[length] != '+') ++length;
    unsigned feature;
    if (length > 0) {
      if (!parse_feature_word(text, length, feature)) {
        if (unknown) *unknown = text;
        return false;
      }
      mask |= 1ull << feature;
    }
    text += length;
    if (*text == '+') ++text;
  }
  return true;
}

bool parse_number(const char* text, uint64_t& value) {
  value = 0;
  if (!text || !*text) return false;
  unsigned base = 10;
  if (text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    base = 16;
    text += 2;
    if (!*text) return false;
  }
  for (; *text; ++text) {
    unsigned digit;
    char c = *text;
    if (c >= '0' && c <= '9')
      digit = unsigned(c - '0');
    else if (base == 16 && c >= 'a' && c <= 'f')
      digit = unsigned(c - 'a' + 10);
    else if (base == 16 && c >= 'A' && c <= 'F')
      digit = unsigned(c - 'A' + 10);
    else
      return false;
    if (value > (~0ull - digit) / base) return false;  // overflow
    value = value * base + digit;
  }
  return true;
}

bool Options::enabled(Feature feature) const {
  if (skip & (1ull << feature)) return false;
  if (feature < kClassCount && only != 0) return (only >> feature) & 1;
  return true;
}

bool parse_options(const char* cmdline, Options& options, char* error, size_t capacity) {
  char value[160];
  options = Options{};
  if (!cmdline_value(cmdline, "fuzz", value, sizeof(value)) || !parse_number(value, options.seed)) {
    format_to(error, capacity, "fuzz=<seed> missing or not a number");
    return false;
  }
  struct NumberOption {
    const char* key;
    uint64_t* field;
  };
  const NumberOption numbers[] = {{"fuzz_start", &options.start},           {"fuzz_ops", &options.ops},
                                  {"fuzz_progress", &options.progress},     {"fuzz_audit", &options.audit_every},
                                  {"fuzz_audit_from", &options.audit_from}, {"fuzz_step_op", &options.step_op},
                                  {"fuzz_step_mask", &options.step_mask},   {"fuzz_vcpus", &options.vcpus}};
  for (const NumberOption& option : numbers) {
    if (!cmdline_value(cmdline, option.key, value, sizeof(value))) continue;
    if (!parse_number(value, *option.field)) {
      format_to(error, capacity, "%s=%s is not a number", option.key, value);
      return false;
    }
  }
  if (options.vcpus < 1 || options.vcpus > 8) {
    format_to(error, capacity, "fuzz_vcpus=%lu is not 1..8", options.vcpus);
    return false;
  }
  if (cmdline_value(cmdline, "fuzz_log", value, sizeof(value)) &&
      !parse_range(value, options.log_from, options.log_to)) {
    format_to(error, capacity, "fuzz_log=%s is not <op> or <from>-<to>", value);
    return false;
  }
  const char* unknown = nullptr;
  if (cmdline_value(cmdline, "fuzz_skip", value, sizeof(value)) && !parse_features(value, options.skip, &unknown)) {
    format_to(error, capacity, "fuzz_skip: unknown name in '%s'", unknown);
    return false;
  }
  if (cmdline_value(cmdline, "fuzz_only", value, sizeof(value))) {
    if (!parse_features(value, options.only, &unknown)) {
      format_to(error, capacity, "fuzz_only: unknown name in '%s'", unknown);
      return false;
    }
    if (options.only >> kClassCount) {
      format_to(error, capacity, "fuzz_only takes operation classes only (call, mmu, ..., insn)");
      return false;
    }
  }
  return true;
}

}  // namespace lib::fuzz
