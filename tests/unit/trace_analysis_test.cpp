// The analyses on traces the real hypervisors wrote: ours (trace/fixtures/, with the counters
// the hypervisor printed for the same run) and Xen 4.17's. What is checked is what the trace
// and the hypervisor's own counts say independently of the analyser: an emulation is paired
// with a fault only if the fault record before it names its address, the hypervisor's fault
// count is the sum of the faults the trace says it took over and bounced, and a Xen trace,
// which has no fault record of ours, pairs nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>

#include "trace/analyze/analysis.h"
#include "trace/analyze/fault_pairing.h"
#include "trace/analyze/json_report.h"
#include "trace/analyze/svg_plots.h"
#include "trace/analyze/xenalyze_options.h"
#include "trace/format/events.h"

using namespace trace;

namespace {

std::string fixture_path(const std::string& mode) {
  return std::string(PVHV_FIXTURE_DIR) + "/pvhv-fork-" + mode + ".trace";
}

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::unique_ptr<Analysis> ours(const std::string& mode) {
  return analyse(mode, parse_trace_file(fixture_path(mode)), std::nullopt);
}

// The counters the hypervisor and dom0 printed for the run that wrote the fixture
// (trace/fixtures/capture.sh): "trace: started at emulations=N ... page_faults=N", the same
// at "stopped", and the hypervisor's summary "(XEN)   name   value".
struct RunCounters {
  std::map<std::string, uint64_t> started, stopped, summary;
  uint64_t during(const std::string& name) const { return stopped.at(name) - started.at(name); }
};

RunCounters counters(const std::string& mode) {
  RunCounters c;
  std::ifstream in(std::string(PVHV_FIXTURE_DIR) + "/pvhv-fork-" + mode + ".counters.txt");
  std::regex field(R"(([a-z_]+)=(\d+))"), summary(R"(^\(XEN\)\s+([a-z_]+)\s+(\d+)$)");
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_match(line, m, summary)) {
      c.summary[m[1]] = std::stoull(m[2]);
      continue;
    }
    auto& into = line.rfind("trace: started", 0) == 0 ? c.started : c.stopped;
    for (auto it = std::sregex_iterator(line.begin(), line.end(), field); it != std::sregex_iterator(); ++it)
      into[(*it)[1]] = std::stoull((*it)[2]);
  }
  return c;
}

uint64_t count(const Analysis& a, uint32_t event) {
  auto it = a.stats.events.find(event);
  return it == a.stats.events.end() ? 0 : it->second;
}

// Read straight from the records (one CPU: file order is analysis order): how many resolution
// records of `event` directly follow a PTE_WRITE_FAULT that names the same address (word 2 of
// the resolution) or table (word 0), with no other fault in between.
uint64_t resolutions_naming_their_fault(const TraceFile& f, uint32_t event, bool by_table) {
  const ParsedRecord* fault = nullptr;
  uint64_t matching = 0;
  for (const ParsedRecord& r : f.records) {
    if (r.event == events::kPteWriteFault) {
      fault = &r;
    } else if (r.event == event && fault) {
      uint64_t named = by_table ? r.extra64(0) : r.extra64(2);
      matching += named == (by_table ? fault->extra64(4) : fault->extra64(2));
      fault = nullptr;
    } else if (r.event == events::kPvPageFault) {
      fault = nullptr;
    }
  }
  return matching;
}

ParsedRecord record(uint32_t cpu, uint32_t event, uint64_t tsc, std::initializer_list<uint64_t> words64,
                    std::initializer_list<uint32_t> words32 = {}) {
  ParsedRecord r;
  r.cpu = cpu;
  r.event = event;
  r.has_tsc = true;
  r.tsc = tsc;
  for (uint64_t w : words64) {
    r.extra[r.extra_count++] = uint32_t(w);
    r.extra[r.extra_count++] = uint32_t(w >> 32);
  }
  for (uint32_t w : words32) r.extra[r.extra_count++] = w;
  return r;
}

}  // namespace

TEST(TraceAnalysis, EmulateFixtureEveryEmulationFollowsItsOwnFault) {
  auto a = ours("emulate");
  RunCounters run = counters("emulate");
  EXPECT_EQ(a->file.diagnostics.count(Severity::error), 0u);
  EXPECT_EQ(a->stats.lost_records, 0u);
  uint64_t emulations = count(*a, events::kPvPtwrEmulation);
  ASSERT_EQ(emulations, run.during("emulations")) << "every emulated write of the capture has its record";
  ASSERT_GT(emulations, 50u);
  EXPECT_EQ(resolutions_naming_their_fault(a->file, events::kPvPtwrEmulation, false), emulations)
      << "the hypervisor writes PTE_WRITE_FAULT for the address it then emulates";
  EXPECT_EQ(a->stats.fault_to_emulation.cost.events(), emulations);
  EXPECT_EQ(a->stats.fault_to_emulation.unmatched, 0u);
  EXPECT_EQ(a->stats.pte_write_faults, emulations);
}

// Every page fault the hypervisor counted during the capture (pv_page_faults) was taken over
// (PTE_WRITE_FAULT), bounced (TRC_PV_PAGE_FAULT), or both (taken over, then refused); under
// ptwr=emulate nothing else can happen to a fault (xen/pv/page_fault.cpp).
TEST(TraceAnalysis, EmulateFixtureFaultsAddUpToTheHypervisorsCount) {
  auto a = ours("emulate");
  RunCounters run = counters("emulate");
  const PvmmuStats& s = a->stats;
  EXPECT_EQ(s.faults_bounced, count(*a, events::kPvPageFault));
  EXPECT_GT(s.faults_bounced, 0u) << "exec and copy-on-write faults go to the guest";
  EXPECT_EQ(s.pte_write_faults + s.faults_bounced - s.pte_write_faults_bounced, run.during("page_faults"));
  EXPECT_LE(s.faults_bounced, run.summary.at("bounced_exceptions"));
}

TEST(TraceAnalysis, WritableFixtureEveryDetachFollowsItsOwnFault) {
  auto a = ours("writable");
  RunCounters run = counters("writable");
  const PvmmuStats& s = a->stats;
  uint64_t unhooks = count(*a, events::kPtwrUnhook), detaches = count(*a, events::kPtwrDetachInactive);
  ASSERT_EQ(unhooks, run.during("unhooks"));
  ASSERT_GT(unhooks + detaches, 10u);
  EXPECT_EQ(resolutions_naming_their_fault(a->file, events::kPtwrUnhook, true), unhooks);
  EXPECT_EQ(resolutions_naming_their_fault(a->file, events::kPtwrDetachInactive, true), detaches);
  EXPECT_EQ(s.fault_to_unhook.cost.events(), unhooks);
  EXPECT_EQ(s.fault_to_detach.cost.events(), detaches);
  EXPECT_EQ(s.fault_to_unhook.unmatched + s.fault_to_detach.unmatched, 0u);
  EXPECT_EQ(s.fault_to_emulation.cost.events(), 0u);
  // Here a fault may also be a touch of an unhooked range, reattached without a fault record
  // (it leaves a rehook): between the two bounds.
  uint64_t recorded = s.pte_write_faults + s.faults_bounced - s.pte_write_faults_bounced;
  EXPECT_LE(recorded, run.during("page_faults"));
  EXPECT_LE(run.during("page_faults"), recorded + count(*a, events::kPtwrRehook));
  EXPECT_LE(s.faults_bounced, run.summary.at("bounced_exceptions"));
}

// Xen traces bounced faults only: pairing them with the next emulation, as this analyser once
// did, invents a fault -> emulation cost. There must be no pair at all.
TEST(TraceAnalysis, XenTracePairsNothing) {
  auto a = analyse(TRACE_FIXTURE, parse_trace_file(TRACE_FIXTURE), std::nullopt);
  const PvmmuStats& s = a->stats;
  EXPECT_EQ(s.pte_write_faults, 0u);
  EXPECT_EQ(s.faults_bounced, 3341u) << "Xen's xenalyze: page_fault 3341";
  EXPECT_EQ(s.fault_to_emulation.cost.events(), 0u);
  EXPECT_EQ(s.fault_to_emulation.unmatched, 780u) << "Xen's xenalyze: ptwr 780, none with a fault of ours";
  EXPECT_EQ(s.pte_write_faults_bounced, 0u);
  for (const ForkStory& f : a->forks.stories) EXPECT_EQ(f.emulation_cycles, 0u);
}

// Our own trace with its fault records renamed to an event the analyser does not know reads
// like a Xen trace: nothing is paired, the bounced count is unchanged.
TEST(TraceAnalysis, WithoutOurFaultRecordsNothingIsPaired) {
  std::vector<uint8_t> bytes = read_bytes(fixture_path("emulate"));
  TraceFile plain = parse_trace(bytes);
  uint64_t renamed = 0;
  for (const ParsedRecord& r : plain.records)
    if (r.event == events::kPteWriteFault) {
      uint32_t header;
      std::memcpy(&header, &bytes[r.offset], 4);
      header = (header & ~0x0fffffffu) | (events::kPvhvSubclass + 0xff);
      std::memcpy(&bytes[r.offset], &header, 4);
      renamed++;
    }
  ASSERT_GT(renamed, 0u);
  auto before = analyse("plain", std::move(plain), std::nullopt);
  auto after = analyse("renamed", parse_trace(bytes), std::nullopt);
  EXPECT_EQ(after->stats.fault_to_emulation.cost.events(), 0u);
  EXPECT_EQ(after->stats.fault_to_emulation.unmatched, count(*before, events::kPvPtwrEmulation));
  EXPECT_EQ(after->stats.faults_bounced, before->stats.faults_bounced);
}

// One fault record of the real trace given another address: its emulation is not paired.
TEST(TraceAnalysis, AFaultPairsOnlyWithTheEmulationOfItsAddress) {
  std::vector<uint8_t> bytes = read_bytes(fixture_path("emulate"));
  TraceFile original = parse_trace(bytes);
  auto fault = std::find_if(original.records.begin(), original.records.end(),
                            [](const ParsedRecord& r) { return r.event == events::kPteWriteFault; });
  ASSERT_NE(fault, original.records.end());
  bytes[fault->offset + 12 + 8] ^= 0x08;  // header, TSC, rip (2 words): the address's low byte
  auto before = analyse("original", std::move(original), std::nullopt);
  auto after = analyse("moved", parse_trace(bytes), std::nullopt);
  EXPECT_EQ(after->stats.fault_to_emulation.cost.events() + 1, before->stats.fault_to_emulation.cost.events());
  EXPECT_EQ(after->stats.fault_to_emulation.unmatched, 1u);
  EXPECT_EQ(after->stats.pte_write_faults_unresolved, 1u);
}

TEST(TraceFaultPairing, RulesOnRecords) {
  using namespace events;
  FaultPairing p;
  // Same CPU, same address: paired. The cost runs from the fault.
  EXPECT_EQ(p.record(record(0, kPteWriteFault, 100, {0x401000, 0x7000, 0xab})).outcome, FaultOutcome::none);
  FaultResolution r = p.record(record(0, kPvPtwrEmulation, 180, {0x1067, 0x7000, 0x401000}));
  EXPECT_EQ(r.outcome, FaultOutcome::emulated);
  EXPECT_EQ(r.fault.tsc, 100u);
  // Paired once only.
  EXPECT_EQ(p.record(record(0, kPvPtwrEmulation, 190, {0x1067, 0x7000, 0x401000})).outcome, FaultOutcome::none);
  // Another CPU's emulation does not resolve this CPU's fault; the table names the detach.
  p.record(record(1, kPteWriteFault, 200, {0x401000, 0x9000, 0xcd}));
  EXPECT_EQ(p.record(record(0, kPvPtwrEmulation, 210, {0, 0x9000, 0})).outcome, FaultOutcome::none);
  EXPECT_EQ(p.record(record(1, kPtwrUnhook, 220, {0xce}, {3})).outcome, FaultOutcome::none);
  EXPECT_EQ(p.record(record(1, kPtwrUnhook, 230, {0xcd}, {3})).outcome, FaultOutcome::unhooked);
  // Taken over, then refused: the bounce of the same address resolves it.
  p.record(record(0, kPteWriteFault, 300, {0x401000, 0xa000, 0xef}));
  EXPECT_EQ(p.record(record(0, kPvPageFault, 310, {0x401000, 0xa000}, {3})).outcome, FaultOutcome::bounced);
  // Superseded by another fault, cut by lost records, left open at the end: unresolved.
  p.record(record(0, kPteWriteFault, 400, {0, 0xb000, 1}));
  p.record(record(0, kPteWriteFault, 410, {0, 0xc000, 1}));
  p.record(record(0, kLostRecords, 420, {}, {5, 0, 0, 0}));
  EXPECT_EQ(p.record(record(0, kPvPtwrEmulation, 430, {0, 0xc000, 0})).outcome, FaultOutcome::none);
  p.record(record(1, kPteWriteFault, 500, {0, 0xd000, 1}));
  p.finish();
  EXPECT_EQ(p.faults(), 6u);
  EXPECT_EQ(p.unresolved(), 3u);
}

TEST(TraceAnalysis, ForksOfTheFixturesTellTheirStory) {
  for (const char* mode : {"emulate", "writable"}) {
    auto a = ours(mode);
    ASSERT_EQ(a->forks.stories.size(), count(*a, events::kOperationBegin)) << mode;
    ASSERT_GE(a->forks.stories.size(), 4u) << mode;
    uint64_t faults = 0, bounced = 0, emulations = 0, unhooks = 0;
    for (const ForkStory& f : a->forks.stories) {
      EXPECT_TRUE(f.complete) << mode;
      EXPECT_STRNE(f.mode(), "hypercall") << mode << ": direct PTE writes in every fork";
      faults += f.faults;
      bounced += f.bounced_faults;
      emulations += f.emulations;
      unhooks += f.unhooks;
    }
    EXPECT_LE(faults, a->stats.pte_write_faults);
    EXPECT_LE(bounced, a->stats.faults_bounced);
    if (std::string(mode) == "emulate") {
      EXPECT_GT(emulations, 0u);
      EXPECT_EQ(unhooks, 0u);
    } else {
      EXPECT_GT(unhooks, 0u);
      EXPECT_EQ(emulations, 0u);
    }
  }
}

// A CAPTURE_DRAIN (dom0 copying records out) inside a fork of the real trace: its span is
// taken out of the fork's cost, and it is not a step of the fork.
TEST(TraceAnalysis, CaptureDrainsAreNotPartOfTheForksCost) {
  TraceFile file = parse_trace_file(fixture_path("writable"));
  auto plain = analyse("plain", file, std::nullopt);
  const ForkStory& fork = plain->forks.stories.at(0);
  ASSERT_GT(fork.end_tsc - fork.begin_tsc, 3000u);
  uint64_t start = fork.begin_tsc + 1000;
  ParsedRecord drain = record(fork.cpu, events::kCaptureDrain, start + 2000, {start}, {4096});
  file.records.push_back(drain);  // after every record of the CPU: the drain span is what counts
  auto drained = analyse("drained", std::move(file), std::nullopt);
  const ForkStory& with = drained->forks.stories.at(0);
  EXPECT_EQ(with.capture_cycles, fork.capture_cycles + 2000);
  EXPECT_EQ(with.cycles() + 2000, fork.cycles());
  EXPECT_EQ(with.steps.size(), fork.steps.size());
}

TEST(TraceAnalysis, JsonIsBalancedAndEscaped) {
  auto a = ours("writable");
  std::string json = json_report(*a, true);
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < json.size(); ++i) {
    char c = json[i];
    if (in_string) {
      if (c == '\\')
        i++;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    depth += (c == '{' || c == '[') - (c == '}' || c == ']');
    ASSERT_GE(depth, 0);
  }
  EXPECT_EQ(depth, 0);
  EXPECT_NE(json.find("\"forks\":["), std::string::npos);
  EXPECT_NE(json.find("\"pte_write_faults\":{"), std::string::npos);
}

TEST(TraceAnalysis, SvgPlotsAreDocuments) {
  auto a = ours("writable");
  std::string timeline = fork_timeline_svg(a->forks.stories.at(0), a->hz);
  EXPECT_EQ(timeline.rfind("<?xml", 0), 0u);
  EXPECT_NE(timeline.find("</svg>"), std::string::npos);
  EXPECT_NE(ptes_histogram_svg(a->stats).find("<rect"), std::string::npos);
  EXPECT_NE(cost_breakdown_svg(a->forks, a->hz).find("writable"), std::string::npos);
}

// The histogram's bars as (tables in the bucket, bar height).
std::vector<std::pair<uint64_t, double>> histogram_bars(const std::string& svg) {
  std::vector<std::pair<uint64_t, double>> bars;
  std::regex bar(R"re(<rect [^>]*height="([0-9.]+)" fill="#1f77b4"><title>[0-9]+\.\.[0-9]+: ([0-9]+) tables)re");
  for (std::sregex_iterator it(svg.begin(), svg.end(), bar), end; it != end; ++it)
    bars.emplace_back(std::stoull((*it)[2]), std::stod((*it)[1]));
  return bars;
}

// A writable trace has tens of thousands of tables with a few entries changed beside a few with
// hundreds: on a log scale every non-empty bucket stands at least one decade (a 280-pixel axis
// over 1 + log10(most) decades) and the heights keep the counts' order.
TEST(TraceAnalysis, PtesHistogramIsOnALogScaleSoSmallBucketsShow) {
  auto a = ours("writable");
  auto bars = histogram_bars(ptes_histogram_svg(a->stats));
  ASSERT_GE(bars.size(), 2u);
  uint64_t most = 0;
  for (auto& [count, height] : bars) most = std::max(most, count);
  const double decade = 280.0 / (1 + std::log10(double(most)));
  for (auto& [count, height] : bars) {
    EXPECT_GE(height, decade - 0.1) << count << " tables";
    for (auto& [other, other_height] : bars)
      if (other < count) EXPECT_LT(other_height, height);
  }
  PvmmuStats few;
  few.ptes_per_table = {{1, 65577}, {512, 193}};
  bars = histogram_bars(ptes_histogram_svg(few));
  ASSERT_EQ(bars.size(), 2u);
  EXPECT_NEAR(bars[1].second / bars[0].second, (1 + std::log10(193.0)) / (1 + std::log10(65577.0)), 0.01);
}

TEST(TraceAnalysis, OptionsFollowXenalyzeNames) {
  std::string error;
  auto o = parse_xenalyze_options({"--summary", "--cpu-hz=2.4G", "t.trace"}, error);
  ASSERT_TRUE(o);
  EXPECT_EQ(*o->cpu_hz, 2400000000u);
  EXPECT_FALSE(parse_xenalyze_options({"--cpu-hz=fast", "t"}, error));
  EXPECT_FALSE(parse_xenalyze_options({"--compare", "a"}, error));
  EXPECT_FALSE(parse_xenalyze_options({"--bogus", "a"}, error));
  EXPECT_TRUE(parse_xenalyze_options({"--compare", "a", "b"}, error));
}

TEST(TraceAnalysis, CpuHzIsANumberInRange) {
  for (const char* bad : {"nan", "NaN", "inf", "-inf", "1e13G", "1e400", "-1", "0", "999", "1001G", "0x10", " 2.4G",
                          "2.4 G", "", "G", "1e12001"})
    EXPECT_FALSE(parse_cpu_hz(bad)) << bad;
  EXPECT_EQ(parse_cpu_hz("1000"), kMinCpuHz);
  EXPECT_EQ(parse_cpu_hz("1000G"), kMaxCpuHz);
  EXPECT_EQ(parse_cpu_hz("2.4G"), 2400000000u);
  EXPECT_EQ(parse_cpu_hz("3M"), 3000000u);
  std::string error;
  EXPECT_FALSE(parse_xenalyze_options({"--fork=-1", "t"}, error));
  EXPECT_FALSE(parse_xenalyze_options({"--fork=99999999999999999999", "t"}, error));
  auto o = parse_xenalyze_options({"--fork=18446744073709551615", "--svg=d", "t"}, error);
  ASSERT_TRUE(o);
  EXPECT_EQ(*o->fork_index, ~0ull);
}

// A TSC_FREQUENCY outside the bounds in a trace is ignored, not divided by.
TEST(TraceAnalysis, AbsurdTraceFrequencyIsIgnored) {
  TraceFile file = parse_trace_file(fixture_path("emulate"));
  for (ParsedRecord& r : file.records)
    if (r.event == events::kTscFrequency) r.extra[0] = r.extra[1] = 0;
  CpuHz hz = choose_cpu_hz(file, std::nullopt);
  EXPECT_EQ(hz.hz, kDefaultCpuHz);
  ASSERT_TRUE(hz.refused_trace_hz);
  EXPECT_EQ(*hz.refused_trace_hz, 0u);
}

TEST(TraceCycleSummary, HugeSamplesNeitherOverflowNorTurnNegative) {
  CycleSummary s;
  // xenalyze's signed total overflows on the second sample (95 * a negative long long).
  s.add(~0ull - 1);
  s.add(1ull << 63);
  s.add(7);
  EXPECT_EQ(s.count(), 3u);
  EXPECT_EQ(s.cycles(), ~0ull) << "the total saturates when printed";
  EXPECT_EQ(s.average(), uint64_t(((unsigned __int128)(~0ull - 1) + (1ull << 63) + 7) / 3));
  EXPECT_EQ(s.weighted_percentile(5), 1ull << 63);
  EXPECT_EQ(s.weighted_percentile(95), ~0ull - 1);
  EXPECT_EQ(s.percentile(5), 7u);
  EXPECT_EQ(s.percentile(100), ~0ull - 1) << "clamped to the last sample";
  s.add_interval(500, 100);
  EXPECT_EQ(s.backwards(), 1u);
  EXPECT_EQ(s.events(), 3u) << "a backwards interval is no duration";
}
