#include "trace/analyze/pvmmu_report.h"

#include <algorithm>

#include "trace/parse/event_catalog.h"

namespace trace {
namespace {

void print_pair(std::FILE* out, const char* name, const PairStats& p, const CpuHz& hz) {
  if (!p.cost.events() && !p.unmatched) return;
  std::fprintf(out, "  %-26s %8llu  avg %10llu cyc %9.3f us  p50 %10llu  unmatched %llu\n", name,
               (unsigned long long)p.cost.events(), (unsigned long long)p.cost.average(),
               hz.seconds(p.cost.average()) * 1e6, (unsigned long long)p.cost.percentile(50),
               (unsigned long long)p.unmatched);
}

void print_page_faults(std::FILE* out, const PvmmuStats& s) {
  std::fprintf(out, "--- Page faults ---\n");
  std::fprintf(out, "  bounced to the guest (TRC_PV_PAGE_FAULT): %llu\n", (unsigned long long)s.faults_bounced);
  if (!s.pte_write_faults) {
    std::fprintf(out,
                 "  no PTE_WRITE_FAULT records (a Xen trace, or none taken over): no fault is paired "
                 "with an emulation or detach\n");
    return;
  }
  std::fprintf(out,
               "  PTE writes taken over (PTE_WRITE_FAULT): %llu: emulated %llu, unhooked %llu, detached "
               "inactive %llu, then bounced %llu, unresolved %llu\n",
               (unsigned long long)s.pte_write_faults, (unsigned long long)s.fault_to_emulation.cost.events(),
               (unsigned long long)s.fault_to_unhook.cost.events(), (unsigned long long)s.fault_to_detach.cost.events(),
               (unsigned long long)s.pte_write_faults_bounced, (unsigned long long)s.pte_write_faults_unresolved);
}

}  // namespace

void print_event_statistics(std::FILE* out, const Analysis& a) {
  const PvmmuStats& s = a.stats;
  double seconds = a.hz.seconds(s.cycles());
  std::fprintf(out, "--- Event statistics (%s, TSC %s from %s) ---\n", a.path.c_str(), a.hz.describe().c_str(),
               a.hz.source_name());
  std::fprintf(out, "  %-10s %-28s %10s %12s\n", "event", "name", "count", "per second");
  for (auto& [event, count] : s.events)
    std::fprintf(out, "  %#010x %-28s %10llu %12.1f\n", event, event_name(event), (unsigned long long)count,
                 seconds > 0 ? double(count) / seconds : 0.0);
  print_page_faults(out, s);
  std::fprintf(out, "--- Paired costs (cycles between records; see trace/EVENTS.md) ---\n");
  print_pair(out, "fault -> emulation", s.fault_to_emulation, a.hz);
  print_pair(out, "fault -> unhook", s.fault_to_unhook, a.hz);
  print_pair(out, "fault -> detach-inactive", s.fault_to_detach, a.hz);
  print_pair(out, "unhook -> rehook", s.unhook_to_rehook, a.hz);
  for (auto& [what, count] : s.flushes)
    std::fprintf(out, "  flush %-24s %8llu\n", what.c_str(), (unsigned long long)count);
  if (s.audits)
    std::fprintf(out, "  audits %llu: %llu frames, %llu mismatches\n", (unsigned long long)s.audits,
                 (unsigned long long)s.audit_frames, (unsigned long long)s.audit_mismatches);
  if (s.lost_records) std::fprintf(out, "  lost records: %llu\n", (unsigned long long)s.lost_records);
}

void print_forks(std::FILE* out, const Analysis& a) {
  const ForkStories& forks = a.forks;
  if (forks.stories.empty()) {
    std::fprintf(out,
                 "No operations marked in this trace (no OPERATION_BEGIN/END records, see "
                 "trace/EVENTS.md): nothing to split into forks.\n");
    return;
  }
  for (const ForkStory& f : forks.stories) {
    std::fprintf(out, "=== %s %u on cpu %u (%s mode)%s: %llu cycles (%.3f us) ===\n", operation_kind_name(f.kind), f.id,
                 f.cpu, f.mode(), f.complete ? "" : " [no end marker]", (unsigned long long)f.cycles(),
                 a.hz.seconds(f.cycles()) * 1e6);
    for (const StoryStep& s : f.steps) {
      std::fprintf(out, "  +%10llu  %-15s %s", (unsigned long long)elapsed(f.begin_tsc, s.tsc), step_kind_name(s.kind),
                   s.detail.c_str());
      if (s.cost) std::fprintf(out, "  [%llu cycles]", (unsigned long long)s.cost);
      std::fprintf(out, "\n");
    }
    std::fprintf(out,
                 "  total: %llu PTE-write faults, %llu bounced, %llu emulations (%llu cycles), %llu unhooks, "
                 "%llu rehooks (%llu cycles detached), %llu direct writes, %llu flushes, %llu hypercalls\n",
                 (unsigned long long)f.faults, (unsigned long long)f.bounced_faults, (unsigned long long)f.emulations,
                 (unsigned long long)f.emulation_cycles, (unsigned long long)f.unhooks, (unsigned long long)f.rehooks,
                 (unsigned long long)f.unhooked_cycles, (unsigned long long)f.direct_writes,
                 (unsigned long long)f.flushes, (unsigned long long)f.hypercalls);
  }
  if (forks.dropped) std::fprintf(out, "(%zu more operations not kept)\n", forks.dropped);
}

void print_ptes_per_table(std::FILE* out, const Analysis& a) {
  const auto& h = a.stats.ptes_per_table;
  std::fprintf(out, "--- PTEs changed per unhooked page-table page (from rehooks) ---\n");
  if (h.empty()) {
    std::fprintf(out, "  no PTWR_REHOOK records\n");
    return;
  }
  uint64_t most = 0, tables = 0, ptes = 0;
  for (auto& [changed, count] : h) {
    most = std::max(most, count);
    tables += count;
    ptes = saturating_add(ptes, saturating_mul(changed, count));
  }
  for (auto& [changed, count] : h) {
    int bar = int(saturating_mul(count, 50) / most);  // count <= most: 0..50
    std::fprintf(out, "  %4u %8llu %s\n", changed, (unsigned long long)count, std::string(size_t(bar), '#').c_str());
  }
  std::fprintf(out, "  tables %llu, PTEs %llu, mean %.1f per table; revalidated %llu, refused %llu\n",
               (unsigned long long)tables, (unsigned long long)ptes, tables ? double(ptes) / double(tables) : 0.0,
               (unsigned long long)a.stats.ptes_revalidated, (unsigned long long)a.stats.ptes_refused);
}

void print_diagnostics(std::FILE* out, const TraceFile& file, bool verbose) {
  for (const Diagnostic& d : file.diagnostics.entries())
    if (verbose || d.severity != Severity::info) std::fprintf(out, "%s\n", file.diagnostics.format(d).c_str());
  if (file.diagnostics.suppressed())
    std::fprintf(out, "(%zu further diagnostics suppressed)\n", file.diagnostics.suppressed());
}

}  // namespace trace
