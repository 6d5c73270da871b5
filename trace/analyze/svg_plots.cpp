#include "trace/analyze/svg_plots.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include "trace/analyze/svg.h"

namespace trace {
namespace {

const char* lane_colour(StepKind kind) {
  switch (kind) {
    case StepKind::fault: return "#d62728";
    case StepKind::bounced: return "#e377c2";
    case StepKind::emulation: return "#1f77b4";
    case StepKind::unhook:
    case StepKind::detach_inactive: return "#ff7f0e";
    case StepKind::direct_writes: return "#2ca02c";
    case StepKind::rehook: return "#9467bd";
    case StepKind::flush:
    case StepKind::invlpg: return "#8c564b";
    default: return "#7f7f7f";
  }
}

int lane_of(StepKind kind) {
  switch (kind) {
    case StepKind::fault:
    case StepKind::bounced: return 0;
    case StepKind::emulation: return 1;
    case StepKind::unhook:
    case StepKind::detach_inactive:
    case StepKind::rehook:
    case StepKind::slot_evict: return 2;
    case StepKind::direct_writes: return 3;
    case StepKind::flush:
    case StepKind::invlpg: return 4;
    default: return 5;
  }
}

bool write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  return bool(out);
}

}  // namespace

std::string fork_timeline_svg(const ForkStory& fork, const CpuHz& hz) {
  static const char* lanes[] = {"faults", "emulations", "unhook/rehook", "direct writes", "flushes", "hypercalls"};
  const double left = 120, width = 840, top = 50, lane_h = 30;
  Svg svg(1000, int(top + 6 * lane_h + 60));
  double span = double(std::max<uint64_t>(fork.cycles(), 1));
  svg.text(10, 25,
           std::string(operation_kind_name(fork.kind)) + " " + std::to_string(fork.id) + " (" + fork.mode() +
               " mode): " + std::to_string(fork.cycles()) + " cycles, " +
               std::to_string(hz.seconds(fork.cycles()) * 1e6) + " us",
           14);
  for (int i = 0; i < 6; ++i) {
    svg.text(10, top + i * lane_h + 19, lanes[i]);
    svg.line(left, top + (i + 1) * lane_h, left + width, top + (i + 1) * lane_h, "#dddddd");
  }
  for (const StoryStep& s : fork.steps) {
    double x = left + width * double(elapsed(fork.begin_tsc, s.tsc)) / span;
    double w = std::max(1.5, width * double(s.cost) / span);
    double start = s.cost ? x - w : x;  // a paired step spans back to what it resolves
    svg.rect(std::max(left, start), top + lane_of(s.kind) * lane_h + 5, w, lane_h - 10, lane_colour(s.kind),
             std::string(step_kind_name(s.kind)) + ": " + s.detail);
  }
  double axis = top + 6 * lane_h + 20;
  svg.line(left, axis, left + width, axis, "black");
  svg.text(left, axis + 16, "0");
  svg.text(left + width, axis + 16, std::to_string(fork.cycles()) + " cycles", 12, "end");
  return svg.finish();
}

namespace {

// Bar heights on a log scale: a trace of fork-heavy work has tens of thousands of 1-entry
// rehooks beside a few hundred 512-entry ones, and on a linear axis the second bucket, the one
// that tells writable page tables pay off, is a hairline. One table is one decade's height above
// the axis, so a bucket that holds anything is always visible.
double log_bar_height(uint64_t count, uint64_t most, double height) {
  if (count == 0) return 0;
  return height * (1 + std::log10(double(count))) / (1 + std::log10(double(std::max(count, most))));
}

}  // namespace

std::string ptes_histogram_svg(const PvmmuStats& stats) {
  const double left = 60, bottom = 340, width = 900, height = 280;
  Svg svg(1000, 400);
  svg.text(10, 25, "PTEs changed per unhooked page-table page (tables per bucket, log scale)", 14);
  const auto& h = stats.ptes_per_table;
  if (h.empty()) {
    svg.text(left, 200, "no PTWR_REHOOK records in this trace");
    return svg.finish();
  }
  // Buckets of equal width over 0..max changed entries (at most 64 bars).
  // 64-bit: a corrupt rehook may say 0xffffffff entries changed.
  uint64_t max_changed = h.rbegin()->first;
  uint64_t bucket = std::max<uint64_t>(1, (max_changed + 64) / 64);
  std::map<uint64_t, uint64_t> bars;
  for (auto& [changed, count] : h) bars[changed / bucket] = saturating_add(bars[changed / bucket], count);
  uint64_t most = 1;
  for (auto& [b, count] : bars) most = std::max(most, count);
  // A grid line and a label at each power of ten up to the tallest bar.
  for (uint64_t decade = 1; decade <= most; decade *= 10) {
    double y = bottom - log_bar_height(decade, most, height);
    svg.line(left, y, left + width, y, "#dddddd");
    svg.text(left - 5, y + 4, std::to_string(decade), 12, "end");
    if (decade > most / 10) break;
  }
  size_t n = max_changed / bucket + 1;
  double bar_w = width / double(n);
  for (auto& [b, count] : bars) {
    double bh = log_bar_height(count, most, height);
    svg.rect(left + b * bar_w, bottom - bh, std::max(1.0, bar_w - 1), bh, "#1f77b4",
             std::to_string(b * bucket) + ".." + std::to_string(b * bucket + bucket - 1) + ": " +
                 std::to_string(count) + " tables");
  }
  svg.line(left, bottom, left + width, bottom, "black");
  svg.text(left, bottom + 18, "0");
  svg.text(left + width, bottom + 18, std::to_string(max_changed) + " PTEs", 12, "end");
  svg.text(left - 5, bottom - height - 8, std::to_string(most) + " (most)", 12, "end");
  return svg.finish();
}

std::string cost_breakdown_svg(const ForkStories& forks, const CpuHz& hz) {
  struct Totals {
    uint64_t n = 0, total = 0, emulation = 0, detached = 0;
  };
  std::map<std::string, Totals> modes;
  for (const ForkStory& f : forks.stories) {
    Totals& t = modes[f.mode()];
    t.n++;  // sums saturate (checked.h)
    t.total = saturating_add(t.total, f.cycles());
    t.emulation = saturating_add(t.emulation, f.emulation_cycles);
    t.detached = saturating_add(t.detached, std::min(f.unhooked_cycles, f.cycles()));
  }
  Svg svg(1000, 400);
  svg.text(10, 25, "Average cost per operation by page-table mode (cycles)", 14);
  if (modes.empty()) {
    svg.text(60, 200, "no marked operations in this trace");
    return svg.finish();
  }
  uint64_t most = 1;
  for (auto& [mode, t] : modes) most = std::max(most, t.total / t.n);
  const double left = 120, bar_h = 40, width = 780;
  int row = 0;
  for (auto& [mode, t] : modes) {
    double y = 60 + row++ * (bar_h + 30);
    double scale = width / double(most);
    uint64_t emulation = t.emulation / t.n, detached = t.detached / t.n, total = t.total / t.n;
    uint64_t rest = elapsed(saturating_add(emulation, detached), total);
    svg.text(10, y + 25, mode + " (" + std::to_string(t.n) + ")");
    double x = left;
    svg.rect(x, y, emulation * scale, bar_h, "#1f77b4", "fault->emulation " + std::to_string(emulation));
    x += emulation * scale;
    svg.rect(x, y, detached * scale, bar_h, "#ff7f0e", "unhooked (guest writes natively) " + std::to_string(detached));
    x += detached * scale;
    svg.rect(x, y, rest * scale, bar_h, "#7f7f7f", "rest " + std::to_string(rest));
    svg.text(left + total * scale + 5, y + 25,
             std::to_string(total) + " cycles, " + std::to_string(hz.seconds(total) * 1e6) + " us");
  }
  svg.text(10, 390, "blue: PTE-write fault->emulation   orange: unhook->rehook   grey: rest of the operation");
  return svg.finish();
}

std::vector<std::string> write_svg_plots(const Analysis& a, const std::string& dir, std::optional<uint64_t> fork_index,
                                         std::string& error) {
  if (fork_index && *fork_index >= a.forks.stories.size()) {
    error = "--fork=" + std::to_string(*fork_index) + ": the trace has " + std::to_string(a.forks.stories.size()) +
            " marked operations (numbered from 0)";
    return {};
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    error = "cannot create " + dir + ": " + ec.message();
    return {};
  }
  std::vector<std::pair<std::string, std::string>> plots = {
      {"ptes-per-table.svg", ptes_histogram_svg(a.stats)},
      {"cost-by-mode.svg", cost_breakdown_svg(a.forks, a.hz)},
  };
  size_t index = fork_index ? size_t(*fork_index) : 0;
  if (index < a.forks.stories.size())
    plots.push_back({"fork-timeline.svg", fork_timeline_svg(a.forks.stories[index], a.hz)});
  std::vector<std::string> written;
  for (auto& [name, text] : plots) {
    auto path = std::filesystem::path(dir) / name;
    if (!write_file(path, text)) {
      error = "cannot write " + path.string();
      return {};
    }
    written.push_back(path.string());
  }
  return written;
}

}  // namespace trace
