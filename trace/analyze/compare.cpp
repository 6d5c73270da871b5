#include "trace/analyze/compare.h"

#include <cmath>
#include <map>
#include <set>

#include "trace/parse/event_catalog.h"

namespace trace {
namespace {

// B/A as a percentage, printed from the double: converting it to an integer would overflow
// for a tiny A (a corrupt trace), and it is "-" when it means nothing.
void row(std::FILE* out, const std::string& name, double a, double b) {
  char ratio[32] = "-";
  double percent = a != 0 ? b / a * 100 : 0;
  if (a != 0 && std::isfinite(percent)) std::snprintf(ratio, sizeof ratio, "%.0f%%", std::trunc(percent));
  std::fprintf(out, "  %-36s %14.1f %14.1f %14.1f %8s\n", name.c_str(), a, b, b - a, ratio);
}

struct ForkAverages {
  double n = 0, cycles = 0, faults = 0, emulations = 0, unhooks = 0, flushes = 0;
};

ForkAverages averages(const ForkStories& forks) {
  ForkAverages avg;
  for (const ForkStory& f : forks.stories) {
    avg.n++;
    avg.cycles += double(f.cycles());
    avg.faults += double(f.faults);
    avg.emulations += double(f.emulations);
    avg.unhooks += double(f.unhooks);
    avg.flushes += double(f.flushes);
  }
  if (avg.n) {
    avg.cycles /= avg.n;
    avg.faults /= avg.n;
    avg.emulations /= avg.n;
    avg.unhooks /= avg.n;
    avg.flushes /= avg.n;
  }
  return avg;
}

}  // namespace

void print_comparison(std::FILE* out, const Analysis& a, const Analysis& b) {
  std::fprintf(out, "A: %s\nB: %s\n", a.path.c_str(), b.path.c_str());
  std::fprintf(out, "  %-36s %14s %14s %14s %8s\n", "metric", "A", "B", "B-A", "B/A");
  row(out, "seconds traced", a.hz.seconds(a.model.total_cycles()), b.hz.seconds(b.model.total_cycles()));
  std::set<uint32_t> ids;
  for (auto& [e, n] : a.stats.events) ids.insert(e);
  for (auto& [e, n] : b.stats.events) ids.insert(e);
  auto count = [](const std::map<uint32_t, uint64_t>& m, uint32_t k) {
    auto it = m.find(k);
    return it == m.end() ? 0.0 : double(it->second);
  };
  for (uint32_t e : ids) {
    char name[64];
    std::snprintf(name, sizeof name, "%s %#x", event_name(e), e);
    row(out, name, count(a.stats.events, e), count(b.stats.events, e));
  }
  std::set<uint32_t> ops;
  for (auto& [op, n] : a.stats.hypercalls) ops.insert(op);
  for (auto& [op, n] : b.stats.hypercalls) ops.insert(op);
  for (uint32_t op : ops) {
    const char* name = hypercall_name(op);
    row(out, std::string("hypercall ") + (name ? name : std::to_string(op)), count(a.stats.hypercalls, op),
        count(b.stats.hypercalls, op));
  }
  row(out, "fault->emulation avg cycles", double(a.stats.fault_to_emulation.cost.average()),
      double(b.stats.fault_to_emulation.cost.average()));
  row(out, "unhook->rehook avg cycles", double(a.stats.unhook_to_rehook.cost.average()),
      double(b.stats.unhook_to_rehook.cost.average()));
  ForkAverages fa = averages(a.forks), fb = averages(b.forks);
  row(out, "operations marked", fa.n, fb.n);
  row(out, "operation avg cycles", fa.cycles, fb.cycles);
  row(out, "operation avg faults", fa.faults, fb.faults);
  row(out, "operation avg emulations", fa.emulations, fb.emulations);
  row(out, "operation avg unhooks", fa.unhooks, fb.unhooks);
  row(out, "operation avg flushes", fa.flushes, fb.flushes);
}

}  // namespace trace
