#include "trace/parse/trace_file.h"

#include <cstdio>
#include <cstring>
#include <fstream>

#include "trace/format/events.h"
#include "trace/format/framing.h"
#include "trace/parse/event_catalog.h"

namespace trace {
namespace {

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)v);
  return buf;
}

uint32_t load_word(std::span<const uint8_t> bytes, uint64_t offset) {
  uint32_t w;
  std::memcpy(&w, bytes.data() + offset, 4);
  return w;
}

// Walks the file window by window. One instance per parse; state is the file cursor.
class Parser {
 public:
  Parser(std::span<const uint8_t> bytes, const ParseLimits& limits, TraceFile& out)
      : bytes_(bytes), limits_(limits), out_(out), last_tsc_(limits.max_cpus + 1, 0) {}

  void run() {
    uint64_t offset = 0;
    while (offset < bytes_.size() && !stopped_) offset = parse_window(offset);
  }

 private:
  uint64_t remaining(uint64_t offset) const { return bytes_.size() - offset; }

  bool is_window_header(uint64_t offset) const {
    if (remaining(offset) < CpuChange::kBytes) return false;
    RecordHeader h(load_word(bytes_, offset));
    return h.event() == events::kCpuChange && !h.has_tsc() && h.extra_words() == CpuChange::kExtraWords;
  }

  uint64_t parse_window(uint64_t offset) {
    if (remaining(offset) < CpuChange::kBytes) {
      diag(Severity::error, Problem::truncated, offset,
           std::to_string(remaining(offset)) + " trailing bytes, too short for a window header");
      return bytes_.size();
    }
    if (!is_window_header(offset)) return not_a_window(offset);
    uint32_t cpu = load_word(bytes_, offset + 4);
    uint32_t declared = load_word(bytes_, offset + 8);
    uint64_t start = offset + CpuChange::kBytes;
    if (cpu >= limits_.max_cpus) {
      diag(Severity::error, Problem::bad_cpu, offset,
           "window for cpu " + std::to_string(cpu) + " (limit " + std::to_string(limits_.max_cpus) +
               "); skipping to the next window header");
      return resync(start);
    }
    if (declared % 4) {
      diag(Severity::error, Problem::misaligned, offset,
           "window size " + std::to_string(declared) + " is not a multiple of 4");
    }
    uint64_t end = start + declared;
    if (end > bytes_.size()) {
      diag(Severity::error, Problem::truncated, offset,
           "window of cpu " + std::to_string(cpu) + " declares " + std::to_string(declared) +
               " bytes but the file has " + std::to_string(remaining(start)) + " left");
      end = bytes_.size();
    }
    out_.windows.push_back({offset, cpu, declared});
    if (cpu > out_.max_cpu_seen) out_.max_cpu_seen = cpu;
    parse_records(cpu, start, end);
    return end;
  }

  uint64_t not_a_window(uint64_t offset) {
    uint32_t word = load_word(bytes_, offset);
    if (offset == 0) {
      out_.foreign = true;
      diag(Severity::error, Problem::foreign_file, 0,
           "not a xentrace file: first word " + hex(word) + " is not a TRC_TRACE_CPU_CHANGE window header");
      stopped_ = true;
      return bytes_.size();
    }
    diag(Severity::error, Problem::corrupt_window, offset,
         "expected a window header, found word " + hex(word) + "; resynchronising");
    return resync(offset + 4);
  }

  // Skips to the next plausible window header (aligned, known cpu, fits in the file).
  uint64_t resync(uint64_t offset) {
    offset = (offset + 3) & ~uint64_t(3);
    for (; offset + CpuChange::kBytes <= bytes_.size(); offset += 4) {
      if (is_window_header(offset) && load_word(bytes_, offset + 4) < limits_.max_cpus &&
          load_word(bytes_, offset + 8) <= remaining(offset + CpuChange::kBytes))
        return offset;
    }
    return bytes_.size();
  }

  void parse_records(uint32_t cpu, uint64_t offset, uint64_t end) {
    while (offset < end && !stopped_) {
      if (end - offset < 4) {
        diag(Severity::error, Problem::truncated, offset, "partial record header at window end");
        return;
      }
      RecordHeader h(load_word(bytes_, offset));
      if (offset + h.size_bytes() > end) {
        diag(Severity::error, Problem::record_overrun, offset,
             "record " + hex(h.event()) + " of " + std::to_string(h.size_bytes()) +
                 " bytes runs past the end of its window (" + std::to_string(end - offset) + " bytes left)");
        return;
      }
      add_record(cpu, offset, h);
      offset += h.size_bytes();
    }
  }

  void add_record(uint32_t cpu, uint64_t offset, RecordHeader h) {
    if (out_.records.size() >= limits_.max_records) {
      diag(Severity::error, Problem::limit_reached, offset,
           "record limit " + std::to_string(limits_.max_records) + " reached; rest ignored");
      stopped_ = true;
      return;
    }
    ParsedRecord r;
    r.offset = offset;
    r.cpu = cpu;
    r.event = h.event();
    r.has_tsc = h.has_tsc();
    r.extra_count = uint8_t(h.extra_words());
    r.size = uint32_t(h.size_bytes());
    uint64_t at = offset + 4;
    if (r.has_tsc) {
      r.tsc = uint64_t(load_word(bytes_, at)) | (uint64_t(load_word(bytes_, at + 4)) << 32);
      at += 8;
    }
    for (unsigned i = 0; i < r.extra_count; ++i) r.extra[i] = load_word(bytes_, at + 4 * i);
    track_tsc(r);
    check_record(r);
    out_.records.push_back(r);
  }

  void track_tsc(ParsedRecord& r) {
    uint64_t& last = last_tsc_[r.cpu];
    if (!r.has_tsc) {
      r.tsc = last;
      return;
    }
    if (r.tsc < last)
      diag(Severity::warning, Problem::tsc_backwards, r.offset,
           "TSC on cpu " + std::to_string(r.cpu) + " goes backwards from " + std::to_string(last) + " to " +
               std::to_string(r.tsc));
    last = r.tsc;
  }

  void check_record(const ParsedRecord& r) {
    if (r.event == events::kCpuChange) {
      diag(Severity::warning, Problem::nested_cpu_change, r.offset, "TRC_TRACE_CPU_CHANGE inside a window");
      return;
    }
    if (r.event == events::kLostRecords) {
      check_lost(r);
      return;
    }
    int expected = expected_extra_words(r.event);
    if (expected >= 0 && r.extra_count != unsigned(expected)) {
      diag(Severity::warning, Problem::bad_extra_words, r.offset,
           std::string(event_name(r.event)) + " (" + hex(r.event) + ") has " + std::to_string(r.extra_count) +
               " extra words, expected " + std::to_string(expected));
    }
    if (!is_known_class(r.event))
      diag(Severity::warning, Problem::unknown_event, r.offset,
           "event " + hex(r.event) + " belongs to no known trace class");
  }

  void check_lost(const ParsedRecord& r) {
    if (r.extra_count != LostRecords::kExtraWords || !r.has_tsc) {
      diag(Severity::warning, Problem::bad_extra_words, r.offset,
           "TRC_LOST_RECORDS with " + std::to_string(r.extra_count) + " extra words (expected 4, with TSC)");
      return;
    }
    LostRecords lost = LostRecords::from_extra(r.extra);
    diag(Severity::info, Problem::lost_records, r.offset,
         std::to_string(lost.count) + " records lost on cpu " + std::to_string(r.cpu) + " between TSC " +
             std::to_string(lost.first_tsc) + " and " + std::to_string(r.tsc));
  }

  void diag(Severity s, Problem p, uint64_t offset, std::string message) {
    out_.diagnostics.add(s, p, offset, std::move(message));
  }

  std::span<const uint8_t> bytes_;
  const ParseLimits& limits_;
  TraceFile& out_;
  std::vector<uint64_t> last_tsc_;
  bool stopped_ = false;
};

}  // namespace

TraceFile parse_trace(std::span<const uint8_t> bytes, const ParseLimits& limits) {
  TraceFile file;
  file.diagnostics = DiagnosticLog(limits.max_diagnostics);
  file.file_bytes = bytes.size();
  if (limits.max_cpus == 0) return file;
  Parser(bytes, limits, file).run();
  return file;
}

TraceFile parse_trace_file(const std::string& path, const ParseLimits& limits, uint64_t max_bytes) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  TraceFile failed;
  if (!in) {
    failed.diagnostics.add(Severity::error, Problem::foreign_file, 0, "cannot open " + path);
    failed.foreign = true;
    return failed;
  }
  std::streamoff size = in.tellg();
  if (size < 0 || uint64_t(size) > max_bytes) {
    failed.diagnostics.add(Severity::error, Problem::limit_reached, 0,
                           path + " is larger than the limit of " + std::to_string(max_bytes) + " bytes");
    return failed;
  }
  std::vector<uint8_t> bytes(static_cast<size_t>(size));
  in.seekg(0);
  in.read(reinterpret_cast<char*>(bytes.data()), size);
  if (!in) {
    failed.diagnostics.add(Severity::error, Problem::truncated, 0, "read error on " + path);
    return failed;
  }
  return parse_trace(bytes, limits);
}

}  // namespace trace
