#include "trace/parse/diagnostic.h"

#include <cstdio>

namespace trace {

const char* problem_name(Problem problem) {
  switch (problem) {
    case Problem::foreign_file: return "foreign-file";
    case Problem::truncated: return "truncated";
    case Problem::corrupt_window: return "corrupt-window";
    case Problem::bad_cpu: return "bad-cpu";
    case Problem::misaligned: return "misaligned";
    case Problem::record_overrun: return "record-overrun";
    case Problem::bad_extra_words: return "bad-extra-words";
    case Problem::unknown_event: return "unknown-event";
    case Problem::tsc_backwards: return "tsc-backwards";
    case Problem::lost_records: return "lost-records";
    case Problem::limit_reached: return "limit-reached";
    case Problem::nested_cpu_change: return "nested-cpu-change";
  }
  return "?";
}

void DiagnosticLog::add(Severity severity, Problem problem, uint64_t offset, std::string message) {
  per_problem_[size_t(problem)]++;
  per_severity_[size_t(severity)]++;
  if (entries_.size() >= limit_) {
    suppressed_++;
    return;
  }
  entries_.push_back({severity, problem, offset, std::move(message)});
}

size_t DiagnosticLog::count(Problem problem) const { return per_problem_[size_t(problem)]; }
size_t DiagnosticLog::count(Severity severity) const { return per_severity_[size_t(severity)]; }

std::string DiagnosticLog::format(const Diagnostic& d) const {
  static const char* severities[] = {"info", "warning", "error"};
  char head[96];
  std::snprintf(head, sizeof head, "%s: offset 0x%llx (%s): ", severities[size_t(d.severity)],
                (unsigned long long)d.offset, problem_name(d.problem));
  return head + d.message;
}

}  // namespace trace
