// xenalyze --per-iteration (trace/analyze/loop_iterations.h) on real traces of Debian's Linux's
// fork loop (linux/trace_loop.py: Linux 6.1 as a PV domU, domain 1, runs 3 x fork+execve
// /bin/true, each iteration between two ioperm markers, physdev_op in the trace): one our
// hypervisor wrote under ptwr=emulate, with its ptwr counters over the same recording
// (trace/fixtures/linux-loop-ours-emulate.counters.txt), and one Xen 4.17 wrote. Neither is
// generated: what the analysis finds is checked against the records and the counters.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "trace/analyze/analysis.h"
#include "trace/analyze/loop_iterations.h"
#include "trace/analyze/xenalyze_options.h"
#include "trace/format/events.h"

using namespace trace;

namespace {

constexpr int kLinuxDomain = 1;
constexpr size_t kIterations = 3;

std::string fixture(const std::string& name) { return std::string(PVHV_FIXTURE_DIR) + "/" + name; }

std::unique_ptr<Analysis> load(const std::string& name) {
  return analyse(name, parse_trace_file(fixture(name)), std::nullopt);
}

// "name value" lines (linux/trace_loop.py's counters of the recording).
std::map<std::string, uint64_t> counters(const std::string& name) {
  std::map<std::string, uint64_t> values;
  std::ifstream in(fixture(name));
  std::string key;
  uint64_t value;
  while (in >> key >> value) values[key] = value;
  return values;
}

uint64_t records_of(const TraceFile& file, uint32_t event) {
  uint64_t n = 0;
  for (const ParsedRecord& r : file.records) n += r.event == event;
  return n;
}

uint64_t sum_of(const LoopAnalysis& loop, const std::string& row) {
  uint64_t n = 0;
  for (const LoopIteration& it : loop.iterations) n += it.counts().get(row);
  return n;
}

class LinuxLoop : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    a_ = load(std::string("linux-loop-") + GetParam() + ".trace");
    ASSERT_FALSE(a_->file.records.empty());
    loop_ = analyse_loop(a_->file, a_->steps, kLinuxDomain);
  }
  std::unique_ptr<Analysis> a_;
  LoopAnalysis loop_;
};

}  // namespace

// Every iteration of the loop is found, between the 4 markers (3 starts and the end of the
// last), none of them with lost records; each marker is ioperm on and off: two or more records.
TEST_P(LinuxLoop, FindsEveryIterationBetweenTheMarkers) {
  EXPECT_EQ(loop_.markers, kIterations + 1);
  EXPECT_GE(loop_.marker_records, 2 * loop_.markers);
  ASSERT_EQ(loop_.iterations.size(), kIterations);
  for (const LoopIteration& it : loop_.iterations) {
    EXPECT_FALSE(it.lost);
    EXPECT_LT(it.begin_tsc, it.end_tsc);
    EXPECT_FALSE(it.events.empty());
  }
}

// A modern kernel's fork+execve: hundreds of mmu_update entries, a few emulated PTE writes, the
// page tables of the new address spaces pinned through mmuext_op; every batch names its
// entries (Xen's count argument, which ours now records too), none absurd.
TEST_P(LinuxLoop, EachIterationIsAForkAndAnExec) {
  for (const LoopIteration& it : loop_.iterations) {
    LoopCounts c = it.counts();
    EXPECT_GE(c.get("mmu_update calls"), 100u);
    EXPECT_GE(c.get("mmu_update entries"), c.get("mmu_update calls"));
    EXPECT_LT(c.get("mmu_update entries"), 100000u);
    EXPECT_GE(c.get("mmuext_op entries"), c.get("mmuext_op calls"));
    EXPECT_GE(c.get("mmuext_op calls"), 2u);
    EXPECT_GE(c.get("emulated PTE writes"), 1u);
    EXPECT_EQ(c.get("hypercall physdev_op"), 0u);  // the markers are not inside
    EXPECT_GE(c.get("hypercalls"), c.get("mmu_update calls") + c.get("mmuext_op calls"));
  }
}

// The typical iteration is the median by events; the figures' min <= typical <= max and the
// average between min and max.
TEST_P(LinuxLoop, TypicalIsTheMedianAndFiguresAreBounded) {
  long typical = loop_.typical();
  ASSERT_GE(typical, 0);
  size_t below = 0, above = 0, events = loop_.iterations[size_t(typical)].events.size();
  for (const LoopIteration& it : loop_.iterations) {
    below += it.events.size() < events;
    above += it.events.size() > events;
  }
  EXPECT_LE(below, kIterations / 2);
  EXPECT_LE(above, kIterations / 2);
  auto figures = loop_figures(loop_);
  ASSERT_FALSE(figures.empty());
  EXPECT_EQ(figures.front().name, "mmu_update calls");
  for (const LoopFigure& f : figures) {
    EXPECT_LE(f.min, f.typical) << f.name;
    EXPECT_LE(f.typical, f.max) << f.name;
    EXPECT_LE(double(f.min), f.average) << f.name;
    EXPECT_LE(f.average, double(f.max)) << f.name;
  }
}

// The folded sequence accounts for every event of the iteration once, in order.
TEST_P(LinuxLoop, FoldedSequenceCoversEveryEvent) {
  const LoopIteration& it = loop_.iterations[size_t(loop_.typical())];
  size_t folded = 0;
  for (const std::string& line : folded_sequence(it, a_->hz.hz)) {
    size_t x = line.rfind(" x", line.find(" entries") == std::string::npos ? std::string::npos : line.find(" entries"));
    ASSERT_NE(x, std::string::npos) << line;
    folded += std::stoul(line.substr(x + 2));
  }
  EXPECT_EQ(folded, it.events.size());
  std::string report = loop_report(loop_, a_->hz.hz);
  EXPECT_NE(report.find("3 iterations (3 complete, 0 with lost records)"), std::string::npos) << report;
  EXPECT_NE(report.find("ordered events of the typical iteration"), std::string::npos);
}

// Other domains issue none of the loop's markers: nothing is attributed to them.
TEST_P(LinuxLoop, OtherDomainsHaveNoIterations) {
  for (int domain : {0, 2, 32767}) {
    LoopAnalysis other = analyse_loop(a_->file, a_->steps, domain);
    EXPECT_TRUE(other.iterations.empty()) << domain;
  }
}

INSTANTIATE_TEST_SUITE_P(Traces, LinuxLoop, ::testing::Values("ours-emulate", "xen417"));

// Ours: what the analysis finds agrees with the hypervisor's counters over the recording: every
// emulation it counted is a PTWR_EMULATION record, the loop's emulations are among them (the
// rest are the boot's tail and dom0's), and under emulate each PTE write the hypervisor took
// over was emulated, nothing unhooked or detached.
TEST(LinuxLoopOurs, CountsAgreeWithTheHypervisorsCounters) {
  auto a = load("linux-loop-ours-emulate.trace");
  auto hv = counters("linux-loop-ours-emulate.counters.txt");
  ASSERT_TRUE(hv.count("ptwr_emulations"));
  EXPECT_EQ(records_of(a->file, events::kPvPtwrEmulation), hv["ptwr_emulations"]);
  EXPECT_EQ(records_of(a->file, events::kPteWriteFault), hv["ptwr_emulations"]);
  EXPECT_EQ(hv["ptwr_unhooks"], 0u);
  EXPECT_EQ(hv["ptwr_faults"], 0u);
  LoopAnalysis loop = analyse_loop(a->file, a->steps, kLinuxDomain);
  uint64_t emulated = sum_of(loop, "emulated PTE writes");
  EXPECT_GT(emulated, 0u);
  EXPECT_LE(emulated, hv["ptwr_emulations"]);
  EXPECT_EQ(sum_of(loop, "PTE write faults taken over"), emulated);
  EXPECT_EQ(sum_of(loop, "unhooks") + sum_of(loop, "rehooks") + sum_of(loop, "inactive L1s detached"), 0u);
  // Ours writes Xen's SUBCALL record for the calls inside a multicall, as Xen does.
  EXPECT_GT(sum_of(loop, "hypercalls inside multicalls"), 0u);
}

// Xen 4.17's trace has none of our records, and its preempted batches are continuations, not
// new batches of 2^31 entries.
TEST(LinuxLoopXen, XensTraceHasNoneOfOurRecords) {
  auto a = load("linux-loop-xen417.trace");
  LoopAnalysis loop = analyse_loop(a->file, a->steps, kLinuxDomain);
  for (const char* row : {"PTE write faults taken over", "unhooks", "rehooks", "TLB flushes", "invlpg"})
    EXPECT_EQ(sum_of(loop, row), 0u) << row;
  for (const LoopIteration& it : loop.iterations)
    for (const LoopEvent& e : it.events) EXPECT_LT(e.count, 0x80000000u);
  EXPECT_GT(sum_of(loop, "hypercalls inside multicalls"), 0u);
}

// A trace with no markers (the reference guest's fork benchmark as dom0): no iteration, said so.
TEST(LinuxLoopHostile, TraceWithoutMarkersHasNoIterations) {
  auto a = load("pvhv-fork-emulate.trace");
  for (int domain : {0, 1}) {
    LoopAnalysis loop = analyse_loop(a->file, a->steps, domain);
    EXPECT_EQ(loop.markers, 0u);
    EXPECT_TRUE(loop.iterations.empty());
    EXPECT_EQ(loop.typical(), -1);
    EXPECT_NE(loop_report(loop, a->hz.hz).find("no complete iteration"), std::string::npos);
    EXPECT_TRUE(loop_figures(loop).empty());
  }
}

// The same trace cut short inside the last iteration: that one is never closed by a marker, so
// it is not an iteration; the ones before are found whole.
TEST(LinuxLoopHostile, TruncatedTraceDropsTheUnfinishedIteration) {
  std::ifstream in(fixture("linux-loop-ours-emulate.trace"), std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
  auto whole = load("linux-loop-ours-emulate.trace");
  LoopAnalysis full = analyse_loop(whole->file, whole->steps, kLinuxDomain);
  ASSERT_EQ(full.iterations.size(), kIterations);
  // Cut half-way through the last iteration: every record written after that instant is gone.
  const LoopIteration& last = full.iterations.back();
  uint64_t cut_tsc = last.begin_tsc + (last.end_tsc - last.begin_tsc) / 2;
  size_t cut = 0;
  for (const ParsedRecord& r : whole->file.records)
    if (r.has_tsc && r.tsc <= cut_tsc) cut = std::max<size_t>(cut, r.offset + r.size);
  ASSERT_GT(cut, 0u);
  bytes.resize(cut);
  auto a = analyse("cut", parse_trace(std::span<const uint8_t>(bytes.data(), bytes.size())), std::nullopt);
  LoopAnalysis loop = analyse_loop(a->file, a->steps, kLinuxDomain);
  EXPECT_EQ(loop.iterations.size(), kIterations - 1);
}

TEST(LinuxLoopOptions, DomainIsADomainId) {
  std::string error;
  auto o = parse_xenalyze_options({"--per-iteration", "--domain=7", "t.trace"}, error);
  ASSERT_TRUE(o) << error;
  EXPECT_TRUE(o->per_iteration);
  EXPECT_EQ(o->domain, 7u);
  EXPECT_FALSE(o->summary);
  o = parse_xenalyze_options({"--per-iteration", "t.trace"}, error);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->domain, 1u);
  for (const char* bad :
       {"--domain=-1", "--domain=32752", "--domain=abc", "--domain=", "--domain=99999999999999999999"}) {
    EXPECT_FALSE(parse_xenalyze_options({"--per-iteration", bad, "t.trace"}, error)) << bad;
    EXPECT_NE(error.find("--domain"), std::string::npos) << bad << ": " << error;
  }
}
