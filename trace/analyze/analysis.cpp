#include "trace/analyze/analysis.h"

namespace trace {

std::unique_ptr<Analysis> analyse(const std::string& path, TraceFile file, std::optional<uint64_t> cpu_hz)
{
    auto a = std::make_unique<Analysis>();
    a->path = path;
    a->file = std::move(file);
    a->steps = order_records(a->file);
    a->model.run(a->file, a->steps);
    a->stats = compute_pvmmu_stats(a->file, a->steps);
    a->forks = collect_forks(a->file, a->steps);
    a->hz = choose_cpu_hz(a->file, cpu_hz);
    return a;
}

} // namespace trace
