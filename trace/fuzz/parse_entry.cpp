#include "trace/fuzz/parse_entry.h"

#include <span>

#include "trace/analyze/json_report.h"
#include "trace/analyze/loop_iterations.h"
#include "trace/analyze/svg_plots.h"

namespace trace {

int fuzz_one_input(const uint8_t* data, size_t size) {
  ParseLimits limits;
  limits.max_cpus = 64;  // small limits keep each input fast
  limits.max_records = 1u << 20;
  TraceFile file = parse_trace(std::span<const uint8_t>(data, size), limits);
  if (file.foreign) return 0;
  auto a = analyse("fuzz", std::move(file), std::nullopt);
  std::string json = json_report(*a, true);
  std::string svg = ptes_histogram_svg(a->stats) + cost_breakdown_svg(a->forks, a->hz);
  if (!a->forks.stories.empty()) svg += fork_timeline_svg(a->forks.stories.front(), a->hz);
  std::string loop = loop_report(analyse_loop(a->file, a->steps, 1), a->hz.hz);
  return json.empty() || svg.empty() || loop.empty() ? 1 : 0;
}

}  // namespace trace
