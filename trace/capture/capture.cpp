#include "trace/capture/capture.h"

#include "trace/format/events.h"

namespace trace {

Capture::Capture(TraceWriter& writer, uint64_t tsc_hz_override)
    : writer_(writer),
      tsc_override_(tsc_hz_override),
      decoder_([this](const stream::Frame& f) { frame(f); },
               [this](uint64_t offset, const std::string& what) {
                 problem("stream offset " + std::to_string(offset) + ": " + what);
               }) {}

void Capture::problem(const std::string& what) {
  if (report_.problems.size() < 100) report_.problems.push_back(what);
}

// Records the TSC frequency as a window of its own (cpu 0, no TSC so it orders first), so the
// analyser converts cycles with the producer's frequency.
void Capture::note_tsc_frequency(uint64_t hz) {
  if (tsc_noted_ || !hz) return;
  tsc_noted_ = true;
  RecordFields r;
  r.event = events::kTscFrequency;
  r.extra_count = 2;
  r.extra[0] = uint32_t(hz);
  r.extra[1] = uint32_t(hz >> 32);
  report_.write_error |= !writer_.window(0, std::vector<RecordFields>{r});
  report_.tsc_hz = hz;
}

void Capture::frame(const stream::Frame& f) {
  report_.frames++;
  if (report_.saw_end) {
    problem("frame after END ignored");
    return;
  }
  switch (stream::FrameType(f.type)) {
    case stream::FrameType::hello: {
      stream::Hello hello;
      if (!stream::Hello::decode(f.payload, hello)) {
        problem("short HELLO frame");
        return;
      }
      report_.saw_hello = true;
      report_.cpus = hello.cpus;
      note_tsc_frequency(tsc_override_ ? tsc_override_ : hello.tsc_hz);
      return;
    }
    case stream::FrameType::records: records(f); return;
    case stream::FrameType::lost:
      if (f.payload.size() >= 4)
        report_.streamer_lost_bytes +=
            f.payload[0] | f.payload[1] << 8 | f.payload[2] << 16 | uint32_t(f.payload[3]) << 24;
      return;
    case stream::FrameType::end: report_.saw_end = true; return;
  }
  if (stream::is_control(f.type))
    report_.control_frames++;  // the toolstack's business, not the trace file's
  else
    report_.unknown_frames++;
}

void Capture::records(const stream::Frame& f) {
  if (!report_.saw_hello) problem("RECORDS before HELLO");
  note_tsc_frequency(tsc_override_);
  size_t whole = whole_records_prefix(f.payload.data(), f.payload.size());
  if (whole != f.payload.size()) {
    problem("RECORDS frame for cpu " + std::to_string(f.channel) + " ends inside a record; " +
            std::to_string(f.payload.size() - whole) + " bytes dropped");
    report_.partial_record_bytes += f.payload.size() - whole;
  }
  if (!whole) return;
  report_.write_error |= !writer_.window(f.channel, f.payload.data(), whole);
  report_.windows++;
  report_.record_bytes += whole;
}

const CaptureReport& Capture::finish() {
  decoder_.finish();
  report_.skipped_bytes = decoder_.skipped_bytes();
  if (!report_.saw_end) problem("stream ended without an END frame");
  return report_;
}

}  // namespace trace
