#include "trace/analyze/xen_summary.h"

#include <string>

namespace trace {
namespace {

// xenalyze's print_cycle_summary: count, seconds, average and time-weighted percentiles.
void print_cycles(std::FILE* out, const CycleSummary& s, const std::string& label, const CpuHz& hz) {
  if (!s.count()) return;
  std::fprintf(out, "%s: %7llu %5.2fs %6llu {%6llu|%6llu|%6llu}\n", label.c_str(), (unsigned long long)s.count(),
               hz.seconds(s.cycles()), (unsigned long long)s.average(), (unsigned long long)s.weighted_percentile(5),
               (unsigned long long)s.weighted_percentile(50), (unsigned long long)s.weighted_percentile(95));
}

// xenalyze's print_cpu_affinity: no seconds, plain percentiles.
void print_affinity(std::FILE* out, const CycleSummary& s, const std::string& label) {
  if (!s.count()) return;
  std::fprintf(out, "%s: %7llu %6llu {%6llu|%6llu|%6llu}\n", label.c_str(), (unsigned long long)s.count(),
               (unsigned long long)s.average(), (unsigned long long)s.percentile(5),
               (unsigned long long)s.percentile(50), (unsigned long long)s.percentile(95));
}

std::string padded(const char* prefix, const char* name, int width) {
  char text[64];
  std::snprintf(text, sizeof text, "%s%*s", prefix, width, name);
  return text;
}

void print_pv(std::FILE* out, const VcpuModel& v) {
  static const char* names[kPvEventKinds] = {nullptr,
                                             "hypercall",
                                             nullptr,
                                             "trap",
                                             "page_fault",
                                             "forced_invalid_op",
                                             "emulate privop",
                                             "emulate 4g",
                                             "math state restore",
                                             "paging fixup",
                                             "gdt/ldt mapping fault",
                                             "ptwr",
                                             "ptwr(pae)",
                                             "hypercall",
                                             "hypercall (subcall)"};
  if (!v.has_pv) return;
  std::fprintf(out, "PV events:\n");
  for (int i = 0; i < kPvEventKinds; ++i) {
    uint64_t count = v.pv_counts[size_t(i)];
    if (i == 13) count += v.pv_counts[14];  // subcalls are hypercalls too
    if (!count || !names[i]) continue;
    std::fprintf(out, "  %s  %llu\n", names[i], (unsigned long long)count);
    if (i != 1 && i != 13) continue;
    for (int op = 0; op < kPvHypercallMax; ++op) {
      if (!v.hypercalls[size_t(op)]) continue;
      const char* name = hypercall_name(uint32_t(op));
      std::fprintf(out, "    %-29s[%2d]: %6llu\n", name ? name : "?", op, (unsigned long long)v.hypercalls[size_t(op)]);
    }
  }
}

void print_vcpu(std::FILE* out, const VcpuModel& v, const CpuHz& hz) {
  std::fprintf(out, "-- v%d --\n Runstates:\n", v.vid);
  for (int i = 0; i < kRunstateCount; ++i) {
    print_cycles(out, v.runstates[size_t(i)], padded("  ", runstate_name(i), 8), hz);
    if (i != kRunnable) continue;
    for (int j = kRunnableWake; j < kRunnableCount; ++j)
      print_cycles(out, v.runnable_states[size_t(j)], padded("    ", runnable_state_name(j), 8), hz);
  }
  print_affinity(out, v.affinity_all, " cpu affinity");
  for (auto& [pcpu, s] : v.affinity_per_pcpu) print_affinity(out, s, "   [" + std::to_string(pcpu) + "]");
  print_pv(out, v);
}

void print_domain(std::FILE* out, const DomainModel& d, const CpuHz& hz) {
  std::fprintf(out, "|-- Domain %d --|\n Runstates:\n", d.did);
  for (int i = 0; i < kDomainRunstateCount; ++i)
    print_cycles(out, d.runstates[size_t(i)], padded("  ", domain_runstate_name(i), 8), hz);
  // Grant-table and populate-on-demand sections exist for HVM guests; PV traces leave them
  // empty, as xenalyze prints them.
  std::fprintf(out,
               " Grant table ops:\n  Done by:\n  Done for:\n Populate-on-demand:\n"
               "  Populated:\n  Reclaim order:\n  Reclaim contexts:\n");
  for (auto& [vid, v] : d.vcpus) print_vcpu(out, *v, hz);
  std::fprintf(out, "Emulate eip list\n");
}

}  // namespace

void print_xen_summary(std::FILE* out, const XenModel& model, const CpuHz& hz) {
  std::fprintf(out, "Total time: %.2f seconds (using cpu speed %s)\n", hz.seconds(model.total_cycles()),
               hz.describe().c_str());
  std::fprintf(out, "--- Log volume summary ---\n");
  for (auto& [id, p] : model.pcpus()) {
    if (!p.has_summary) continue;
    std::fprintf(out, " - cpu %d -\n", id);
    for (int t = 0; t < kToplevelCount; ++t)
      if (p.volume[size_t(t)])
        std::fprintf(out, " %-6s: %10llu\n", toplevel_name(t), (unsigned long long)p.volume[size_t(t)]);
  }
  for (auto& [did, d] : model.domains()) print_domain(out, *d, hz);
}

void print_pcpu_report(std::FILE* out, const XenModel& model, const CpuHz& hz) {
  int active = 0;
  for (auto& [id, p] : model.pcpus()) {
    std::fprintf(out, "pcpu %d\n", id);
    print_cycles(out, p.time_running, " running", hz);
    print_cycles(out, p.time_idle, "    idle", hz);
    print_cycles(out, p.time_lost, "    lost", hz);
    active += p.time_running.count() ? 1 : 0;
  }
  std::fprintf(out, "Total active cpus: %d\n", active);
}

}  // namespace trace
