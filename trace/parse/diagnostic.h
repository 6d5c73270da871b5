// What the parser found wrong (or worth telling) about a trace file, with its file offset.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace trace {

enum class Severity { info, warning, error };

enum class Problem {
  foreign_file,       // first bytes are not a per-CPU window header
  truncated,          // file ends inside a window or a record
  corrupt_window,     // a window header where one should be is not one
  bad_cpu,            // window for a CPU number beyond the limit
  misaligned,         // window size not a multiple of 4
  record_overrun,     // a record's size runs past the end of its window
  bad_extra_words,    // known event with the wrong number of extra words
  unknown_event,      // event id in no class we know
  tsc_backwards,      // a CPU's TSC decreased
  lost_records,       // the hypervisor dropped records (TRC_LOST_RECORDS)
  limit_reached,      // a parser limit stopped the parse (file or record count)
  nested_cpu_change,  // TRC_TRACE_CPU_CHANGE inside a window
};

const char* problem_name(Problem problem);

struct Diagnostic {
  Severity severity;
  Problem problem;
  uint64_t offset;
  std::string message;
};

// Keeps at most `limit` diagnostics (a corrupt file can produce one per word) and counts the
// rest, so memory stays bounded whatever the input.
class DiagnosticLog {
 public:
  explicit DiagnosticLog(size_t limit = 1000) : limit_(limit) {}

  void add(Severity severity, Problem problem, uint64_t offset, std::string message);
  const std::vector<Diagnostic>& entries() const { return entries_; }
  size_t suppressed() const { return suppressed_; }
  size_t count(Problem problem) const;
  size_t count(Severity severity) const;
  std::string format(const Diagnostic& d) const;

 private:
  size_t limit_;
  size_t suppressed_ = 0;
  std::vector<Diagnostic> entries_;
  std::vector<size_t> per_problem_ = std::vector<size_t>(16, 0);
  std::vector<size_t> per_severity_ = std::vector<size_t>(3, 0);
};

}  // namespace trace
