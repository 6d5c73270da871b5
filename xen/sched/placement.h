// Pure: where a vCPU runs on several CPUs (sched/scheduler's placement and balancing; unit-tested
// on the host, tests/unit/sched_placement_test.cpp). The design, simpler than Xen's credit2:
//
// - Each CPU has its own run queue: the vCPUs whose `processor` it is. Its load is how many of
//   them wait (runnable, not running) plus one if a vCPU runs there.
// - Wake (a blocked vCPU woken, an unpause, VCPUOP_up): the vCPU stays on its last CPU if that
//   CPU is allowed (its hard affinity, online) and idle; otherwise it goes to the least loaded
//   allowed CPU, its last CPU winning a tie, then the lowest number. Cache warmth first, then
//   spreading.
// - Idle CPUs pull: a CPU that finds its own queue empty takes a waiting vCPU from the busy CPU
//   with the most waiting vCPUs (one whose hard affinity allows the idle CPU); a vCPU placed on
//   an idle CPU is left to it (that CPU was told and is on its way). Nothing is pushed:
//   a busy CPU never hands its work away except when a vCPU's affinity no longer allows it.
// - Hard affinity is absolute: a vCPU never runs on a CPU outside it; one whose affinity no
//   longer includes its CPU is placed again at its next schedule. An affinity with no online
//   CPU in it is treated as every online CPU (Xen breaks such an affinity too).
#pragma once
#include <stdint.h>
#include "arch/x86/cpu/cpu_mask.h"

namespace placement {
constexpr int none = -1;

struct CpuLoad {
  unsigned waiting = 0;  // runnable vCPUs queued on the CPU, not running
  bool busy = false;     // a vCPU (not the idle one) runs there
  constexpr unsigned load() const { return waiting + (busy ? 1u : 0u); }
};

// The CPUs a vCPU may run on: its hard affinity among the online CPUs, or every online CPU when
// that is empty.
constexpr CpuMask allowed_cpus(CpuMask hard_affinity, CpuMask online) {
  CpuMask allowed = hard_affinity & online;
  return allowed.empty() ? online : allowed;
}

// The CPU a waking vCPU goes to (above). `loads` has `cpu_count` entries (CPUs 0..count-1);
// `allowed` must name at least one of them, else `last` is returned.
unsigned choose_cpu(unsigned last, CpuMask allowed, const CpuLoad* loads, unsigned cpu_count);

// The CPU an idle CPU `self` pulls from: the busy one with the most waiting vCPUs, not `self` and not
// in `exclude` (sources the caller found nothing movable on), ties to the lowest number; `none`
// when no busy CPU has a vCPU waiting.
int pull_source(unsigned self, const CpuLoad* loads, unsigned cpu_count, CpuMask exclude);

// Whether a vCPU on `cpu` must leave it: its hard affinity (with the rule above) excludes it.
constexpr bool must_move(unsigned cpu, CpuMask hard_affinity, CpuMask online) {
  return !allowed_cpus(hard_affinity, online).contains(cpu);
}
}  // namespace placement
