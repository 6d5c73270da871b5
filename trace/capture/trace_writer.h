// Writes a trace file the way Xen's xentrace does: every window of raw ring bytes from one CPU
// is preceded by a TRC_TRACE_CPU_CHANGE record (cpu, byte count). Xen's xenalyze reads it.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "trace/format/framing.h"

namespace trace {

// Length of the longest prefix of `bytes` that is made of whole records (0 if none).
size_t whole_records_prefix(const uint8_t* bytes, size_t size);

class TraceWriter {
 public:
  // Appends to a memory buffer (tests) or, with a FILE, streams to it.
  TraceWriter() = default;
  explicit TraceWriter(std::FILE* out) : out_(out) {}

  // Writes one window. Returns false on an I/O error.
  bool window(uint32_t cpu, const uint8_t* records, size_t size);
  // Encodes `records` of one CPU into a window (the TSC note, tests).
  bool window(uint32_t cpu, const std::vector<RecordFields>& records);

  const std::vector<uint8_t>& bytes() const { return memory_; }
  uint64_t written() const { return written_; }

 private:
  bool emit(const uint8_t* data, size_t size);

  std::FILE* out_ = nullptr;
  std::vector<uint8_t> memory_;
  uint64_t written_ = 0;
};

}  // namespace trace
