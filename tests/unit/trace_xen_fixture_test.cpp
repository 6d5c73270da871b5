// The Xen 4.17 trace (written by Xen's own xentrace) must give the counts Xen's xenalyze
// printed for it (/work/shared/fixtures/*.summary.txt).
#include <gtest/gtest.h>

#include <cmath>

#include "trace/analyze/analysis.h"
#include "trace/format/events.h"

using namespace trace;

namespace {

const Analysis& fixture() {
  static std::unique_ptr<Analysis> a = analyse(TRACE_FIXTURE, parse_trace_file(TRACE_FIXTURE), std::nullopt);
  return *a;
}

const VcpuModel& vcpu(int did) { return *fixture().model.domains().at(did)->vcpus.at(0); }

}  // namespace

TEST(TraceXenFixture, ParsesWithoutErrors) {
  const TraceFile& f = fixture().file;
  EXPECT_FALSE(f.foreign);
  EXPECT_EQ(f.diagnostics.count(Severity::error), 0u);
  EXPECT_EQ(f.diagnostics.count(Problem::lost_records), 1u);
  EXPECT_EQ(f.windows.size(), 41u);
  EXPECT_EQ(fixture().stats.lost_records, 90411u);
}

TEST(TraceXenFixture, TotalTimeAtDefaultSpeed) {
  EXPECT_EQ(fixture().hz.hz, 2400000000u);
  EXPECT_NEAR(fixture().hz.seconds(fixture().model.total_cycles()), 7.76, 0.005);
}

TEST(TraceXenFixture, LogVolumeMatchesXenalyze) {
  const PcpuModel& cpu = fixture().model.pcpus().at(0);
  EXPECT_EQ(cpu.volume[0], 68u);      // gen
  EXPECT_EQ(cpu.volume[1], 93488u);   // sched
  EXPECT_EQ(cpu.volume[5], 936548u);  // pv
  EXPECT_EQ(cpu.volume[7], 48u);      // hw
}

TEST(TraceXenFixture, PvEventsMatchXenalyze) {
  const VcpuModel& v = vcpu(0);
  EXPECT_EQ(v.pv_counts[4], 3341u);                      // page_fault
  EXPECT_EQ(v.pv_counts[11], 780u);                      // ptwr
  EXPECT_EQ(v.pv_counts[13] + v.pv_counts[14], 41759u);  // hypercall
  EXPECT_EQ(v.pv_counts[14], 2678u);                     // hypercall (subcall)
  EXPECT_EQ(v.hypercalls[1], 29583u);                    // mmu_update
  EXPECT_EQ(v.hypercalls[3], 750u);
  EXPECT_EQ(v.hypercalls[13], 452u);   // multicall
  EXPECT_EQ(v.hypercalls[14], 1937u);  // update_va_mapping
  EXPECT_EQ(v.hypercalls[17], 65u);
  EXPECT_EQ(v.hypercalls[18], 4u);
  EXPECT_EQ(v.hypercalls[23], 5584u);  // iret
  EXPECT_EQ(v.hypercalls[24], 477u);
  EXPECT_EQ(v.hypercalls[25], 542u);
  EXPECT_EQ(v.hypercalls[26], 2270u);  // mmuext_op
  EXPECT_EQ(v.hypercalls[29], 94u);
  EXPECT_EQ(v.hypercalls[35], 1u);
}

TEST(TraceXenFixture, RunstatesMatchXenalyze) {
  const VcpuModel& dom0 = vcpu(0);
  EXPECT_EQ(dom0.runstates[kRunning].count(), 202u);
  EXPECT_EQ(dom0.runstates[kRunning].average(), 14506122u);
  EXPECT_EQ(dom0.runstates[kRunnable].count(), 94u);
  EXPECT_EQ(dom0.runnable_states[kRunnableWake].count(), 94u);
  EXPECT_EQ(dom0.runstates[kBlocked].count(), 94u);
  EXPECT_EQ(dom0.runstates[kBlocked].average(), 79627626u);
  EXPECT_EQ(dom0.affinity_all.cycles(), 10433705932u);
  const VcpuModel& idle = vcpu(kIdleDomain);
  EXPECT_EQ(idle.runstates[kRunning].count(), 94u);
  EXPECT_EQ(idle.runstates[kRunnable].count(), 93u);
  EXPECT_EQ(idle.runnable_states[kRunnablePreempt].count(), 93u);
  EXPECT_EQ(idle.runstates[kRunnable].average(), 31292868u);
  const DomainModel& d0 = *fixture().model.domains().at(0);
  EXPECT_EQ(d0.runstates[kDomFullRun].count(), 202u);
  EXPECT_EQ(d0.runstates[kDomFullContention].count(), 94u);
  EXPECT_EQ(d0.runstates[kDomBlocked].count(), 94u);
}
