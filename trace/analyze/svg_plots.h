// The plots of --svg <dir>: a timeline of one fork, the PTEs-per-table histogram, and the cost
// breakdown per page-table mode.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "trace/analyze/analysis.h"

namespace trace {

std::string fork_timeline_svg(const ForkStory& fork, const CpuHz& hz);
std::string ptes_histogram_svg(const PvmmuStats& stats);
std::string cost_breakdown_svg(const ForkStories& forks, const CpuHz& hz);

// Writes the three plots into `dir` (created if missing). Returns the files written, or an
// empty list and a message in `error`.
std::vector<std::string> write_svg_plots(const Analysis& a, const std::string& dir, std::optional<uint64_t> fork_index,
                                         std::string& error);

}  // namespace trace
