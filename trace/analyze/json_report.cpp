#include "trace/analyze/json_report.h"

#include "trace/analyze/json_writer.h"
#include "trace/parse/event_catalog.h"

namespace trace {
namespace {

void cycles_object(JsonWriter& j, const CycleSummary& s, const CpuHz& hz) {
  j.begin_object().field("events", s.events()).field("count", s.count()).field("cycles", s.cycles());
  j.field("seconds", hz.seconds(s.cycles())).field("average_cycles", s.average());
  j.field("p50_cycles", s.percentile(50)).end_object();
}

void diagnostics(JsonWriter& j, const TraceFile& f) {
  j.key("diagnostics").begin_object();
  j.field("errors", uint64_t(f.diagnostics.count(Severity::error)));
  j.field("warnings", uint64_t(f.diagnostics.count(Severity::warning)));
  j.key("entries").begin_array();
  for (const Diagnostic& d : f.diagnostics.entries())
    j.begin_object()
        .field("offset", d.offset)
        .field("problem", problem_name(d.problem))
        .field("message", d.message)
        .end_object();
  j.end_array().field("suppressed", uint64_t(f.diagnostics.suppressed())).end_object();
}

void xen_summary(JsonWriter& j, const Analysis& a) {
  j.key("volume").begin_object();
  for (auto& [id, p] : a.model.pcpus()) {
    j.key("cpu" + std::to_string(id)).begin_object();
    for (int t = 0; t < kToplevelCount; ++t)
      if (p.volume[size_t(t)]) j.field(toplevel_name(t), p.volume[size_t(t)]);
    j.end_object();
  }
  j.end_object().key("domains").begin_array();
  for (auto& [did, d] : a.model.domains()) {
    j.begin_object().field("domain", did).key("runstates").begin_object();
    for (int i = 0; i < kDomainRunstateCount; ++i)
      if (d->runstates[size_t(i)].count())
        j.key(domain_runstate_name(i)), cycles_object(j, d->runstates[size_t(i)], a.hz);
    j.end_object().key("vcpus").begin_array();
    for (auto& [vid, v] : d->vcpus) {
      j.begin_object().field("vcpu", vid).key("runstates").begin_object();
      for (int i = 0; i < kRunstateCount; ++i)
        if (v->runstates[size_t(i)].count()) j.key(runstate_name(i)), cycles_object(j, v->runstates[size_t(i)], a.hz);
      j.end_object().key("pv_events").begin_object();
      static const char* names[kPvEventKinds] = {nullptr,
                                                 "hypercall",
                                                 nullptr,
                                                 "trap",
                                                 "page_fault",
                                                 "forced_invalid_op",
                                                 "emulate_privop",
                                                 "emulate_4g",
                                                 "math_state_restore",
                                                 "paging_fixup",
                                                 "gdt_ldt_mapping_fault",
                                                 "ptwr",
                                                 "ptwr_pae",
                                                 "hypercall_v2",
                                                 "hypercall_subcall"};
      for (int k = 0; k < kPvEventKinds; ++k)
        if (v->pv_counts[size_t(k)] && names[k]) j.field(names[k], v->pv_counts[size_t(k)]);
      j.end_object().key("hypercalls").begin_object();
      for (int op = 0; op < kPvHypercallMax; ++op)
        if (v->hypercalls[size_t(op)])
          j.field(hypercall_name(uint32_t(op)) ? hypercall_name(uint32_t(op)) : std::to_string(op).c_str(),
                  v->hypercalls[size_t(op)]);
      j.end_object().end_object();
    }
    j.end_array().end_object();
  }
  j.end_array();
}

void pair(JsonWriter& j, const char* name, const PairStats& p, const CpuHz& hz) {
  j.key(name).begin_object().key("cost");
  cycles_object(j, p.cost, hz);
  j.field("unmatched", p.unmatched).end_object();
}

void pvmmu(JsonWriter& j, const Analysis& a) {
  const PvmmuStats& s = a.stats;
  double seconds = a.hz.seconds(s.cycles());
  j.key("events").begin_array();
  for (auto& [event, count] : s.events)
    j.begin_object()
        .field("id", uint64_t(event))
        .field("name", event_name(event))
        .field("count", count)
        .field("per_second", seconds > 0 ? double(count) / seconds : 0.0)
        .end_object();
  j.end_array().key("pairs").begin_object();
  pair(j, "fault_to_emulation", s.fault_to_emulation, a.hz);
  pair(j, "fault_to_unhook", s.fault_to_unhook, a.hz);
  pair(j, "fault_to_detach_inactive", s.fault_to_detach, a.hz);
  pair(j, "unhook_to_rehook", s.unhook_to_rehook, a.hz);
  j.end_object().field("faults_bounced", s.faults_bounced);
  j.key("pte_write_faults")
      .begin_object()
      .field("count", s.pte_write_faults)
      .field("emulated", s.fault_to_emulation.cost.events())
      .field("unhooked", s.fault_to_unhook.cost.events())
      .field("detached_inactive", s.fault_to_detach.cost.events())
      .field("bounced", s.pte_write_faults_bounced)
      .field("unresolved", s.pte_write_faults_unresolved)
      .end_object();
  j.key("ptes_per_table").begin_object();
  for (auto& [ptes, tables] : s.ptes_per_table) j.field(std::to_string(ptes), tables);
  j.end_object().key("flushes").begin_object();
  for (auto& [what, count] : s.flushes) j.field(what, count);
  j.end_object()
      .key("audit")
      .begin_object()
      .field("runs", s.audits)
      .field("frames", s.audit_frames)
      .field("mismatches", s.audit_mismatches)
      .end_object();
  j.field("lost_records", s.lost_records);
}

void forks(JsonWriter& j, const Analysis& a, bool with_steps) {
  j.key("forks").begin_array();
  for (const ForkStory& f : a.forks.stories) {
    j.begin_object()
        .field("id", f.id)
        .field("kind", operation_kind_name(f.kind))
        .field("cpu", f.cpu)
        .field("mode", f.mode())
        .field("complete", f.complete)
        .field("cycles", f.cycles())
        .field("seconds", a.hz.seconds(f.cycles()))
        .field("faults", f.faults)
        .field("bounced_faults", f.bounced_faults)
        .field("emulations", f.emulations)
        .field("unhooks", f.unhooks)
        .field("rehooks", f.rehooks)
        .field("direct_writes", f.direct_writes)
        .field("flushes", f.flushes)
        .field("hypercalls", f.hypercalls)
        .field("emulation_cycles", f.emulation_cycles)
        .field("unhooked_cycles", f.unhooked_cycles);
    if (with_steps) {
      j.key("steps").begin_array();
      for (const StoryStep& s : f.steps)
        j.begin_object()
            .field("kind", step_kind_name(s.kind))
            .field("tsc", s.tsc)
            .field("cost_cycles", s.cost)
            .field("detail", s.detail)
            .end_object();
      j.end_array();
    }
    j.end_object();
  }
  j.end_array().field("forks_dropped", uint64_t(a.forks.dropped));
}

}  // namespace

std::string json_report(const Analysis& a, bool with_steps) {
  JsonWriter j;
  j.begin_object()
      .field("file", a.path)
      .field("file_bytes", a.file.file_bytes)
      .field("records", uint64_t(a.file.records.size()))
      .field("windows", uint64_t(a.file.windows.size()));
  j.key("cpu_hz").begin_object().field("hz", a.hz.hz).field("source", a.hz.source_name()).end_object();
  j.field("total_cycles", a.model.total_cycles()).field("total_seconds", a.hz.seconds(a.model.total_cycles()));
  diagnostics(j, a.file);
  xen_summary(j, a);
  j.key("pvmmu").begin_object();
  pvmmu(j, a);
  j.end_object();
  forks(j, a, with_steps);
  j.end_object();
  return j.text() + "\n";
}

}  // namespace trace
