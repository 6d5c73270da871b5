// Generates the fuzz seed corpus from real traces (Xen 4.17's fixture, and the fixtures our
// hypervisor wrote, trace/fixtures/): each trace as it is, and corrupt variants of it, blind
// (truncated, bit-flipped, a window size changed) and aimed at the analyser's arithmetic,
// using the parser to find the records: TSCs jumping by 2^63 or to 2^64 - 1, TSCs going
// backwards, and absurd counts (lost-record counts, window sizes, entries changed, frequencies,
// operation ids and domain numbers set to their maximum). The same corpus feeds the fuzz
// replay (the library entry point) and trace/fuzz/check_xenalyze_sanitized.py (the xenalyze
// binary built with ASan and UBSan).
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <random>
#include <vector>

#include "trace/format/events.h"
#include "trace/parse/trace_file.h"

namespace fs = std::filesystem;
using Bytes = std::vector<uint8_t>;
using trace::ParsedRecord;

namespace {

void save(const fs::path& dir, const std::string& name, const Bytes& bytes) {
  std::ofstream(dir / name, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), long(bytes.size()));
}

void put32(Bytes& bytes, uint64_t offset, uint32_t value) {
  if (offset + 4 <= bytes.size()) std::memcpy(bytes.data() + offset, &value, 4);
}

void put64(Bytes& bytes, uint64_t offset, uint64_t value) {
  put32(bytes, offset, uint32_t(value));
  put32(bytes, offset + 4, uint32_t(value >> 32));
}

uint64_t tsc_offset(const ParsedRecord& r) { return r.offset + 4; }
uint64_t extra_offset(const ParsedRecord& r, unsigned i) { return r.offset + (r.has_tsc ? 12 : 4) + 4 * i; }

// A copy of `good` with `change` applied to every record it parses to.
Bytes rewrite(const Bytes& good, const std::function<void(Bytes&, const ParsedRecord&, size_t)>& change) {
  trace::TraceFile file = trace::parse_trace(good);
  Bytes bad = good;
  for (size_t i = 0; i < file.records.size(); ++i) change(bad, file.records[i], i);
  return bad;
}

// Every field the analyses add, subtract or divide set to its largest value.
void absurd_fields(Bytes& b, const ParsedRecord& r, size_t) {
  using namespace trace::events;
  auto all_extra = [&] {
    for (unsigned i = 0; i < r.extra_count; ++i) put32(b, extra_offset(r, i), 0xffffffffu);
  };
  switch (r.event) {
    case kLostRecords:  // count, d/v, first TSC: 2^64 - 1, after the record's own TSC
    case kPtwrRehook:   // entries changed, re-validated, refused
    case kAuditResult:
    case kOperationBegin:  // kind and id
    case kOperationEnd:
    case kCaptureDrain:  // a drain "starting" at 2^64 - 1, of 2^32 - 1 bytes
    case kPteWriteFault:
    case kPvPtwrEmulation:
    case kPvPageFault:
    case kSchedSwitch:
    case kSchedSwitchInfPrev:
    case kSchedSwitchInfNext:
    case kPvHypercallV2: all_extra(); break;
    case kTscFrequency:
      put64(b, extra_offset(r, 0), 1);  // 1 Hz
      break;
    default:
      if ((r.event & 0x0ffff00fu) == TRC_SCHED_RUNSTATE_CHANGE) all_extra();  // domain 65535, vcpu 65535
      break;
  }
}

void variants(const fs::path& dir, const std::string& name, const Bytes& good) {
  save(dir, name, good);
  // Blind damage.
  save(dir, name + ".truncated", Bytes(good.begin(), good.begin() + long(good.size() * 2 / 3 + 1)));
  save(dir, name + ".truncated-header", Bytes(good.begin(), good.begin() + long(std::min<size_t>(good.size(), 10))));
  Bytes flipped = good;
  for (size_t i = 7; i < flipped.size(); i += 97) flipped[i] ^= uint8_t(1u << (i % 8));
  save(dir, name + ".bitflip", flipped);
  Bytes random_flips = good;
  std::mt19937 random(0x7ace);
  for (int n = 0; n < 64 && !random_flips.empty(); ++n)
    random_flips[random() % random_flips.size()] ^= uint8_t(1u << (random() % 8));
  save(dir, name + ".bitflip-random", random_flips);
  Bytes window = good;
  if (window.size() > 12) window[9] ^= 0x40;  // window size
  save(dir, name + ".window", window);
  size_t half = good.size() / 2;  // starts inside a window: not a xentrace file any more
  save(dir, name + ".middle",
       Bytes(good.begin() + long(half), good.begin() + long(std::min(good.size(), half + 8192))));
  Bytes huge_window = good;
  put32(huge_window, 8, 0xffffffffu);
  save(dir, name + ".window-huge", huge_window);

  // Aimed at the arithmetic.
  trace::TraceFile file = trace::parse_trace(good);
  size_t middle = file.records.size() / 2;
  save(dir, name + ".tsc-jump", rewrite(good, [&](Bytes& b, const ParsedRecord& r, size_t i) {
         if (r.has_tsc && i >= middle)  // from the middle on, every TSC 2^63 later
           put64(b, tsc_offset(r), r.tsc + (1ull << 63));
       }));
  save(dir, name + ".tsc-max", rewrite(good, [&](Bytes& b, const ParsedRecord& r, size_t i) {
         if (r.has_tsc && i % 101 == 50) put64(b, tsc_offset(r), ~0ull);
       }));
  save(dir, name + ".tsc-backwards", rewrite(good, [&](Bytes& b, const ParsedRecord& r, size_t i) {
         if (r.has_tsc && i % 7 == 3)  // negative deltas, over and over
           put64(b, tsc_offset(r), i % 2 ? 1 : r.tsc >> 1);
       }));
  save(dir, name + ".tsc-reversed", rewrite(good, [&](Bytes& b, const ParsedRecord& r, size_t) {
         if (r.has_tsc)  // the whole trace runs backwards
           put64(b, tsc_offset(r), ~r.tsc);
       }));
  save(dir, name + ".absurd-counts", rewrite(good, absurd_fields));
  // Absurd counts and TSC jumps together, so the sums they feed are as large as they get.
  Bytes both = rewrite(good, absurd_fields);
  save(dir, name + ".absurd-tsc", rewrite(both, [&](Bytes& b, const ParsedRecord& r, size_t i) {
         if (r.has_tsc) put64(b, tsc_offset(r), i % 2 ? ~0ull - i : i);
       }));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: trace_make_seeds DIR TRACE...\n");
    return 1;
  }
  fs::path dir(argv[1]);
  fs::create_directories(dir);
  for (const auto& old : fs::directory_iterator(dir))  // the corpus is exactly what this run writes
    if (old.is_regular_file()) fs::remove(old.path());
  for (int i = 2; i < argc; ++i) {
    std::ifstream in(argv[i], std::ios::binary);
    Bytes bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (bytes.empty()) {
      std::fprintf(stderr, "trace_make_seeds: cannot read %s\n", argv[i]);
      return 1;
    }
    variants(dir, fs::path(argv[i]).stem().string(), bytes);
  }
  save(dir, "foreign", Bytes{'\x7f', 'E', 'L', 'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  save(dir, "empty", Bytes{});
  std::printf("seeds written to %s\n", dir.c_str());
  return 0;
}
