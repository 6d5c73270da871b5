#include "sched/placement.h"

namespace placement {
unsigned choose_cpu(unsigned last, CpuMask allowed, const CpuLoad* loads, unsigned cpu_count) {
  if (last < cpu_count && allowed.contains(last) && loads[last].load() == 0) return last;
  unsigned best = CpuMask::capacity;
  for (unsigned cpu = 0; cpu < cpu_count; ++cpu) {
    if (!allowed.contains(cpu)) continue;
    if (best == CpuMask::capacity || loads[cpu].load() < loads[best].load() ||
        (cpu == last && loads[cpu].load() == loads[best].load()))
      best = cpu;
  }
  return best == CpuMask::capacity ? last : best;
}

int pull_source(unsigned self, const CpuLoad* loads, unsigned cpu_count, CpuMask exclude) {
  int best = none;
  for (unsigned cpu = 0; cpu < cpu_count; ++cpu) {
    if (cpu == self || exclude.contains(cpu) || loads[cpu].waiting == 0 || !loads[cpu].busy) continue;
    if (best == none || loads[cpu].waiting > loads[unsigned(best)].waiting) best = int(cpu);
  }
  return best;
}
}  // namespace placement
