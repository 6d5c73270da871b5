#include "trace/analyze/analysis.h"

namespace trace {

std::unique_ptr<Analysis> analyse(const std::string& path, TraceFile file, std::optional<uint64_t> cpu_hz) {
  auto a = std::make_unique<Analysis>();
  a->path = path;
  a->file = std::move(file);
  a->steps = order_records(a->file);
  a->model.run(a->file, a->steps);
  WorkClock clock(a->file);  // dom0's drains, taken out of every cost below
  a->stats = compute_pvmmu_stats(a->file, a->steps, clock);
  a->forks = collect_forks(a->file, a->steps, clock);
  a->hz = choose_cpu_hz(a->file, cpu_hz);
  return a;
}

}  // namespace trace
