// A whole xentrace file, parsed: per-CPU windows and the records inside them, in file order,
// plus diagnostics for everything that was wrong. Never throws on bad input; every allocation
// is bounded by the input size and ParseLimits.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "trace/format/record_view.h"
#include "trace/parse/diagnostic.h"

namespace trace {

struct ParsedRecord {
  uint64_t offset = 0;  // file offset of the header word
  uint32_t cpu = 0;     // from the enclosing window
  uint32_t event = 0;
  bool has_tsc = false;
  uint64_t tsc = 0;  // the record's TSC, or the CPU's last TSC if it has none
  uint8_t extra_count = 0;
  uint32_t extra[kMaxExtraWords] = {};
  uint32_t size = 0;  // bytes on disk

  uint64_t extra64(unsigned i) const {
    return i + 1 < extra_count ? uint64_t(extra[i]) | (uint64_t(extra[i + 1]) << 32) : 0;
  }
};

struct Window {
  uint64_t offset;  // of the TRC_TRACE_CPU_CHANGE record
  uint32_t cpu;
  uint32_t bytes;  // as declared
};

struct ParseLimits {
  uint32_t max_cpus = 4096;
  size_t max_records = 64u << 20;
  size_t max_diagnostics = 1000;
};

struct TraceFile {
  uint64_t file_bytes = 0;
  bool foreign = false;  // not a xentrace file at all
  std::vector<Window> windows;
  std::vector<ParsedRecord> records;
  DiagnosticLog diagnostics;
  uint32_t max_cpu_seen = 0;
};

TraceFile parse_trace(std::span<const uint8_t> bytes, const ParseLimits& limits = {});

// Reads a file from disk (refusing files larger than `max_bytes`) and parses it. I/O errors are
// reported as a diagnostic at offset 0.
TraceFile parse_trace_file(const std::string& path, const ParseLimits& limits = {}, uint64_t max_bytes = 1ull << 30);

}  // namespace trace
