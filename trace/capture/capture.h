// The host side of live capture: decodes the framed stream from the hypervisor's dom0 and
// writes a xentrace-format file.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "trace/capture/stream_protocol.h"
#include "trace/capture/trace_writer.h"

namespace trace {

struct CaptureReport {
  uint64_t frames = 0, windows = 0, record_bytes = 0, control_frames = 0, unknown_frames = 0;
  uint64_t skipped_bytes = 0, streamer_lost_bytes = 0, partial_record_bytes = 0;
  uint32_t cpus = 0;
  uint64_t tsc_hz = 0;
  bool saw_hello = false, saw_end = false, write_error = false;
  std::vector<std::string> problems;  // bounded (first 100)
};

class Capture {
 public:
  explicit Capture(TraceWriter& writer, uint64_t tsc_hz_override = 0);

  void feed(const uint8_t* data, size_t size) { decoder_.feed(data, size); }
  const CaptureReport& finish();
  bool ended() const { return report_.saw_end; }

 private:
  void frame(const stream::Frame& f);
  void records(const stream::Frame& f);
  void problem(const std::string& what);
  void note_tsc_frequency(uint64_t hz);

  TraceWriter& writer_;
  uint64_t tsc_override_;
  bool tsc_noted_ = false;
  stream::Decoder decoder_;
  CaptureReport report_;
};

}  // namespace trace
