// build/bin/xenalyze: analyses a xentrace file (ours or Xen's). See trace/README.md.
#include <cstdio>
#include <string>
#include <vector>

#include "trace/analyze/compare.h"
#include "trace/analyze/json_report.h"
#include "trace/analyze/loop_iterations.h"
#include "trace/analyze/pvmmu_report.h"
#include "trace/analyze/record_text.h"
#include "trace/analyze/svg_plots.h"
#include "trace/analyze/xen_summary.h"
#include "trace/analyze/xenalyze_options.h"

using namespace trace;

namespace {

std::unique_ptr<Analysis> load(const std::string& path, const XenalyzeOptions& o) {
  TraceFile file = parse_trace_file(path);
  print_diagnostics(stderr, file, o.verbose);
  if (file.foreign) return nullptr;
  auto a = analyse(path, std::move(file), o.cpu_hz);
  if (a->hz.refused_trace_hz)
    std::fprintf(stderr, "warning: %s: TSC_FREQUENCY %llu Hz is outside 1 kHz..1 THz, ignored; using %s\n",
                 path.c_str(), (unsigned long long)*a->hz.refused_trace_hz, a->hz.describe().c_str());
  if (o.verbose)
    for (const std::string& note : a->model.notes()) std::fprintf(stderr, "%s\n", note.c_str());
  return a;
}

int report(const Analysis& a, const XenalyzeOptions& o) {
  if (o.json) {
    std::fputs(json_report(a, o.json_steps).c_str(), stdout);
    return 0;  // JSON owns stdout
  }
  if (o.dump_all) dump_all(stdout, a);
  if (o.summary) print_xen_summary(stdout, a.model, a.hz);
  if (o.report_pcpu) print_pcpu_report(stdout, a.model, a.hz);
  if (o.stats) print_event_statistics(stdout, a);
  if (o.forks) print_forks(stdout, a);
  if (o.ptes_per_table) print_ptes_per_table(stdout, a);
  if (o.per_iteration) std::fputs(loop_report(analyse_loop(a.file, a.steps, int(o.domain)), a.hz.hz).c_str(), stdout);
  if (o.svg_dir) {
    std::string error;
    auto files = write_svg_plots(a, *o.svg_dir, o.fork_index, error);
    if (files.empty()) {
      std::fprintf(stderr, "xenalyze: %s\n", error.c_str());
      return 1;
    }
    for (const std::string& f : files) std::fprintf(stderr, "wrote %s\n", f.c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string error;
  auto options = parse_xenalyze_options(std::vector<std::string>(argv + 1, argv + argc), error);
  if (!options) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return error.rfind("usage:", 0) == 0 ? 0 : 1;
  }
  auto a = load(options->files[0], *options);
  if (!a) return 2;
  if (options->compare) {
    auto b = load(options->files[1], *options);
    if (!b) return 2;
    print_comparison(stdout, *a, *b);
    return 0;
  }
  int status = report(*a, *options);
  if (status == 0 && options->strict && a->file.diagnostics.count(Severity::error)) return 3;
  return status;
}
