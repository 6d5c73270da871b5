// Analyses of our own event stream: paired costs, forks, PTE histogram, JSON and SVG output,
// all on traces generated through the real ring.
#include <gtest/gtest.h>

#include "trace/analyze/analysis.h"
#include "trace/analyze/json_report.h"
#include "trace/analyze/svg_plots.h"
#include "trace/analyze/xenalyze_options.h"
#include "trace/capture/synthetic_trace.h"
#include "trace/format/events.h"

using namespace trace;

namespace {

std::unique_ptr<Analysis> run(const SyntheticOptions& o)
{
    return analyse("synthetic", parse_trace(make_synthetic_trace(o)), std::nullopt);
}

} // namespace

TEST(TraceAnalysis, WritableForksTellTheirStory)
{
    SyntheticOptions o;
    o.forks = 4;
    o.ptes_per_table = 11;
    auto a = run(o);
    EXPECT_EQ(a->file.diagnostics.count(Severity::error), 0u);
    EXPECT_EQ(a->hz.hz, o.tsc_hz);
    ASSERT_EQ(a->forks.stories.size(), 4u);
    const ForkStory& f = a->forks.stories[1];
    EXPECT_TRUE(f.complete);
    EXPECT_STREQ(f.mode(), "writable");
    EXPECT_EQ(f.unhooks, 2u);
    EXPECT_EQ(f.rehooks, 2u);
    EXPECT_EQ(f.direct_writes, 22u);
    EXPECT_EQ(f.flushes, 3u);
    EXPECT_EQ(f.steps.front().kind, StepKind::hypercall);
    EXPECT_EQ(a->stats.ptes_per_table.at(11), 8u);
    EXPECT_EQ(a->stats.unhook_to_rehook.cost.count(), 8u);
    EXPECT_EQ(a->stats.unhook_to_rehook.cost.average(), 2000u);  // flush record in between
    EXPECT_EQ(a->stats.fault_to_unhook.cost.average(), 1000u);
}

TEST(TraceAnalysis, EmulateForksPairFaultsWithEmulations)
{
    SyntheticOptions o;
    o.writable = false;
    auto a = run(o);
    ASSERT_EQ(a->forks.stories.size(), 3u);
    EXPECT_STREQ(a->forks.stories[0].mode(), "emulate");
    EXPECT_EQ(a->stats.fault_to_emulation.cost.count(), 3u * 2 * 8);
    EXPECT_EQ(a->stats.faults_unresolved, 0u);
}

TEST(TraceAnalysis, CaptureDrainsAreNotPartOfTheForksCost)
{
    SyntheticOptions o;
    o.forks = 2;
    auto plain = run(o);
    o.mid_fork_drain_cycles = 5000000;
    auto drained = run(o);
    ASSERT_EQ(plain->forks.stories.size(), 2u);
    ASSERT_EQ(drained->forks.stories.size(), 2u);
    const ForkStory& with = drained->forks.stories[0];
    const ForkStory& without = plain->forks.stories[0];
    // The synthetic producer spaces records 1000 cycles apart: the drain adds its 5,000,000
    // cycles plus one record slot to the span, and only the drain is taken out.
    EXPECT_EQ(with.end_tsc - with.begin_tsc, without.end_tsc - without.begin_tsc + 5000000 + 1000);
    EXPECT_EQ(with.capture_cycles, 5000000u);
    EXPECT_EQ(with.cycles(), without.cycles() + 1000u);
    EXPECT_EQ(with.steps.size(), without.steps.size()) << "the drain is not a step of the fork";
}

TEST(TraceAnalysis, RingOverflowShowsAsLostRecords)
{
    SyntheticOptions o;
    o.ring_bytes = 256;
    o.drain_each_fork = false;
    auto a = run(o);
    EXPECT_GT(a->stats.lost_records, 0u);
    EXPECT_EQ(a->file.diagnostics.count(Problem::lost_records), 1u);
}

TEST(TraceAnalysis, JsonIsBalancedAndEscaped)
{
    auto a = run({});
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
        if (c == '"')
            in_string = true;
        depth += (c == '{' || c == '[') - (c == '}' || c == ']');
        ASSERT_GE(depth, 0);
    }
    EXPECT_EQ(depth, 0);
    EXPECT_NE(json.find("\"forks\":["), std::string::npos);
}

TEST(TraceAnalysis, SvgPlotsAreDocuments)
{
    auto a = run({});
    std::string timeline = fork_timeline_svg(a->forks.stories.at(0), a->hz);
    EXPECT_EQ(timeline.rfind("<?xml", 0), 0u);
    EXPECT_NE(timeline.find("</svg>"), std::string::npos);
    EXPECT_NE(ptes_histogram_svg(a->stats).find("<rect"), std::string::npos);
    EXPECT_NE(cost_breakdown_svg(a->forks, a->hz).find("writable"), std::string::npos);
}

TEST(TraceAnalysis, OptionsFollowXenalyzeNames)
{
    std::string error;
    auto o = parse_xenalyze_options({"--summary", "--cpu-hz=2.4G", "t.trace"}, error);
    ASSERT_TRUE(o);
    EXPECT_EQ(*o->cpu_hz, 2400000000u);
    EXPECT_FALSE(parse_xenalyze_options({"--cpu-hz=fast", "t"}, error));
    EXPECT_FALSE(parse_xenalyze_options({"--compare", "a"}, error));
    EXPECT_FALSE(parse_xenalyze_options({"--bogus", "a"}, error));
    EXPECT_TRUE(parse_xenalyze_options({"--compare", "a", "b"}, error));
}
