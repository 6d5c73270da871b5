#include "trace/analyze/loop_iterations.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include <xen/xen.h>

#include "trace/analyze/pvmmu_stats.h"
#include "trace/format/events.h"
#include "trace/parse/event_catalog.h"

namespace trace {

const char* loop_event_name(LoopEventKind kind) {
  switch (kind) {
    case LoopEventKind::mmu_update: return "mmu_update";
    case LoopEventKind::mmuext_op: return "mmuext_op";
    case LoopEventKind::multicall: return "multicall";
    case LoopEventKind::update_va_mapping: return "update_va_mapping";
    case LoopEventKind::emulation: return "emulated PTE write";
    case LoopEventKind::pte_write_fault: return "PTE write fault";
    case LoopEventKind::bounced_fault: return "page fault bounced";
    case LoopEventKind::unhook: return "unhook";
    case LoopEventKind::rehook: return "rehook";
    case LoopEventKind::detach_inactive: return "detach inactive";
    case LoopEventKind::flush: return "TLB flush";
    case LoopEventKind::invlpg: return "invlpg";
    case LoopEventKind::other_hypercall: return "hypercall";
  }
  return "?";
}

namespace {

constexpr uint32_t kMarkerOp = __HYPERVISOR_physdev_op;
constexpr uint32_t kBasePointerReason = 4;
// Xen's MMU_UPDATE_PREEMPTED (~(~0U >> 1), not in the public headers): set in the count of an
// mmu_update or mmuext_op the hypervisor continues after preempting it.
constexpr uint32_t kPreempted = 0x80000000u;  // TLB_FLUSH reason (EVENTS.md): a CR3 load

bool is_hypercall(uint32_t event) { return event == events::kPvHypercallV2 || event == events::kPvHypercallSubcall; }

uint32_t hypercall_op(const ParsedRecord& r) { return r.extra[0] & ~uint32_t(TRC_PV_HYPERCALL_V2_ARG_MASK); }

// Argument `wanted` of a TRC_PV_HYPERCALL_V2 record (Xen's layout: the op word's two bits per
// argument say absent, 32 or 64 bits; present ones follow in order), or 0 when absent.
uint32_t hypercall_argument(const ParsedRecord& r, unsigned wanted) {
  unsigned word = 1;
  for (unsigned i = 0; i < 6 && word < r.extra_count; ++i) {
    unsigned width = (r.extra[0] >> (20 + 2 * i)) & 3;
    if (i == wanted) return width ? r.extra[word] : 0;
    word += width == 2 ? 2 : width == 1 ? 1 : 0;
  }
  return 0;
}

bool is_page_table_work(LoopEventKind kind) { return kind != LoopEventKind::other_hypercall; }

// The event a record of the domain is, if any.
bool classify(const ParsedRecord& r, LoopEvent& e) {
  using namespace events;
  e = LoopEvent{LoopEventKind::other_hypercall, r.tsc};
  if (is_hypercall(r.event) && r.extra_count >= 1) {
    e.nested = r.event == kPvHypercallSubcall;
    switch (uint32_t op = hypercall_op(r)) {
      case __HYPERVISOR_mmu_update:
      case __HYPERVISOR_mmuext_op:
        e.kind = op == __HYPERVISOR_mmu_update ? LoopEventKind::mmu_update : LoopEventKind::mmuext_op;
        e.count = hypercall_argument(r, 1);
        e.continuation = (e.count & kPreempted) != 0;
        e.count &= ~kPreempted;
        break;
      case __HYPERVISOR_multicall:
        e.kind = LoopEventKind::multicall;
        e.count = hypercall_argument(r, 1);
        break;
      case __HYPERVISOR_update_va_mapping: e.kind = LoopEventKind::update_va_mapping; break;
      default: e.detail = op; break;
    }
    return true;
  }
  switch (r.event) {
    case kPvPtwrEmulation: e.kind = LoopEventKind::emulation; return true;
    case kPteWriteFault: e.kind = LoopEventKind::pte_write_fault; return true;
    case kPvPageFault: e.kind = LoopEventKind::bounced_fault; return true;
    case kPtwrUnhook: e.kind = LoopEventKind::unhook; return true;
    case kPtwrRehook: e.kind = LoopEventKind::rehook; return true;
    case kPtwrDetachInactive: e.kind = LoopEventKind::detach_inactive; return true;
    case kTlbFlush:
      e.kind = LoopEventKind::flush;
      e.detail = r.extra_count >= 2 ? r.extra[1] : 0;
      return true;
    case kInvlpg: e.kind = LoopEventKind::invlpg; return true;
    default: return false;
  }
}

std::string op_name(uint32_t op) {
  const char* name = hypercall_name(op);
  return name ? name : "op " + std::to_string(op);
}

uint32_t event_op(const LoopEvent& e) {
  switch (e.kind) {
    case LoopEventKind::mmu_update: return __HYPERVISOR_mmu_update;
    case LoopEventKind::mmuext_op: return __HYPERVISOR_mmuext_op;
    case LoopEventKind::multicall: return __HYPERVISOR_multicall;
    case LoopEventKind::update_va_mapping: return __HYPERVISOR_update_va_mapping;
    case LoopEventKind::other_hypercall: return e.detail;
    default: return UINT32_MAX;
  }
}

}  // namespace

uint64_t LoopCounts::get(const std::string& name) const {
  for (const auto& [row, value] : rows)
    if (row == name) return value;
  return 0;
}

LoopCounts LoopIteration::counts() const {
  uint64_t n[13] = {}, entries[3] = {}, base_pointer = 0, hypercalls = 0, continuations = 0, nested = 0;
  std::map<uint32_t, uint64_t> by_op;
  for (const LoopEvent& e : events) {
    if (event_op(e) != UINT32_MAX) {
      hypercalls++;
      nested += e.nested;
      by_op[event_op(e)]++;
    }
    if (e.continuation) {
      continuations++;
      continue;
    }
    n[unsigned(e.kind)]++;
    if (e.kind == LoopEventKind::mmu_update || e.kind == LoopEventKind::mmuext_op || e.kind == LoopEventKind::multicall)
      entries[unsigned(e.kind)] += e.count;
    if (e.kind == LoopEventKind::flush && e.detail == kBasePointerReason) base_pointer++;
  }
  auto count = [&](LoopEventKind k) { return n[unsigned(k)]; };
  LoopCounts c;
  c.rows = {
      {"mmu_update calls", count(LoopEventKind::mmu_update)},
      {"mmu_update entries", entries[unsigned(LoopEventKind::mmu_update)]},
      {"mmuext_op calls", count(LoopEventKind::mmuext_op)},
      {"mmuext_op entries", entries[unsigned(LoopEventKind::mmuext_op)]},
      {"multicall calls", count(LoopEventKind::multicall)},
      {"multicall entries", entries[unsigned(LoopEventKind::multicall)]},
      {"update_va_mapping calls", count(LoopEventKind::update_va_mapping)},
      {"preempted batches continued", continuations},
      {"emulated PTE writes", count(LoopEventKind::emulation)},
      {"PTE write faults taken over", count(LoopEventKind::pte_write_fault)},
      {"page faults bounced", count(LoopEventKind::bounced_fault)},
      {"unhooks", count(LoopEventKind::unhook)},
      {"rehooks", count(LoopEventKind::rehook)},
      {"inactive L1s detached", count(LoopEventKind::detach_inactive)},
      {"TLB flushes", count(LoopEventKind::flush)},
      {"flushes for a CR3 load", base_pointer},
      {"invlpg", count(LoopEventKind::invlpg)},
      {"hypercalls", hypercalls},
      {"hypercalls inside multicalls", nested},
  };
  for (const auto& [op, value] : by_op) c.rows.emplace_back("hypercall " + op_name(op), value);
  return c;
}

long LoopAnalysis::typical() const {
  std::vector<size_t> complete;
  for (size_t i = 0; i < iterations.size(); ++i)
    if (!iterations[i].lost) complete.push_back(i);
  if (complete.empty()) return -1;
  std::stable_sort(complete.begin(), complete.end(),
                   [&](size_t a, size_t b) { return iterations[a].events.size() < iterations[b].events.size(); });
  return long(complete[(complete.size() - 1) / 2]);
}

LoopAnalysis analyse_loop(const TraceFile& file, const std::vector<Step>& steps, int domain) {
  LoopAnalysis loop;
  loop.domain = domain;
  std::map<uint32_t, int> running;  // CPU -> the domain TRC_SCHED_SWITCH last put on it
  bool in_marker = false, open = false;
  uint64_t marker_tsc = 0;
  uint32_t marker_cpu = 0;
  LoopIteration current;
  std::vector<LoopEvent> pending;  // the domain's hypercalls since the marker's last record
  for (const Step& step : steps) {
    const ParsedRecord& r = file.records[step.record];
    if (r.event == events::kLostRecords) {
      if (!step.lost_end && open) current.lost = true;
      continue;
    }
    if (r.event == events::kSchedSwitch && r.extra_count >= 4) {
      running[r.cpu] = int(r.extra[2]);
      continue;
    }
    auto on_cpu = running.find(r.cpu);
    if (on_cpu == running.end() || on_cpu->second != domain) continue;
    if (is_hypercall(r.event) && r.extra_count >= 1 && hypercall_op(r) == kMarkerOp) {
      loop.marker_records++;
      if (!in_marker) {
        loop.markers++;
        if (open) {
          current.end_tsc = r.tsc;
          loop.iterations.push_back(std::move(current));
        }
        in_marker = true;
        open = false;
      }
      marker_tsc = r.tsc;
      marker_cpu = r.cpu;
      pending.clear();
      continue;
    }
    LoopEvent e;
    if (!classify(r, e)) continue;
    if (in_marker && !is_page_table_work(e.kind)) {
      pending.push_back(e);
      continue;
    }
    if (in_marker) {
      // The first page-table work after a marker: the iteration began at the marker.
      in_marker = false;
      open = true;
      current = LoopIteration{};
      current.cpu = marker_cpu;
      current.begin_tsc = marker_tsc;
      current.events = std::move(pending);
      pending.clear();
    }
    if (open) current.events.push_back(e);
  }
  return loop;
}

std::vector<LoopFigure> loop_figures(const LoopAnalysis& loop) {
  std::vector<LoopCounts> counts;
  for (const LoopIteration& it : loop.iterations)
    if (!it.lost) counts.push_back(it.counts());
  // Every row any iteration has, the fixed ones first (each iteration lists them in one order).
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (const LoopCounts& c : counts)
    for (const auto& [name, value] : c.rows)
      if (seen.insert(name).second) names.push_back(name);
  std::stable_partition(names.begin(), names.end(), [](const std::string& n) { return n.rfind("hypercall ", 0) != 0; });
  long typical = loop.typical();
  LoopCounts typical_counts = typical >= 0 ? loop.iterations[size_t(typical)].counts() : LoopCounts{};
  std::vector<LoopFigure> figures;
  for (const std::string& name : names) {
    LoopFigure f{name, typical_counts.get(name), 0, UINT64_MAX, 0};
    long double sum = 0;
    for (const LoopCounts& c : counts) {
      uint64_t v = c.get(name);
      sum += v;
      f.min = std::min(f.min, v);
      f.max = std::max(f.max, v);
    }
    f.average = counts.empty() ? 0 : double(sum / counts.size());
    figures.push_back(f);
  }
  return figures;
}

std::vector<std::string> folded_sequence(const LoopIteration& it, uint64_t cpu_hz) {
  std::vector<std::string> lines;
  constexpr size_t kListed = 12;  // entries listed per folded run, the rest summed
  for (size_t i = 0; i < it.events.size();) {
    const LoopEvent& first = it.events[i];
    size_t j = i;
    uint64_t total = 0;
    std::string listed;
    while (j < it.events.size() && it.events[j].kind == first.kind && event_op(it.events[j]) == event_op(first) &&
           it.events[j].continuation == first.continuation && it.events[j].nested == first.nested &&
           (first.kind != LoopEventKind::flush || it.events[j].detail == first.detail)) {
      total += it.events[j].count;
      if (j - i < kListed) listed += (j == i ? "" : "+") + std::to_string(it.events[j].count);
      ++j;
    }
    size_t run = j - i;
    double us = cpu_hz ? double(first.tsc >= it.begin_tsc ? first.tsc - it.begin_tsc : 0) * 1e6 / double(cpu_hz) : 0;
    std::string name =
        first.kind == LoopEventKind::other_hypercall ? op_name(first.detail) : loop_event_name(first.kind);
    if (first.nested) name = "  " + name + " (in the multicall)";
    if (first.kind == LoopEventKind::flush) name += std::string(" (") + flush_reason_name(first.detail) + ")";
    if (first.continuation) name += " (continued)";
    char head[96];
    std::snprintf(head, sizeof head, "  %+10.1f us  %s x%zu", us, name.c_str(), run);
    std::string line = head;
    if (first.kind == LoopEventKind::mmu_update || first.kind == LoopEventKind::mmuext_op ||
        first.kind == LoopEventKind::multicall)
      line += " entries " + listed + (run > kListed ? "+..." : "") + (run > 1 ? " = " + std::to_string(total) : "");
    lines.push_back(line);
    i = j;
  }
  return lines;
}

std::string loop_report(const LoopAnalysis& loop, uint64_t cpu_hz) {
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "--- Per-iteration sequence: domain %d, iterations marked by physdev_op ---\n",
                loop.domain);
  out += line;
  size_t lost = 0;
  for (const LoopIteration& it : loop.iterations) lost += it.lost;
  std::snprintf(line, sizeof line,
                "physdev_op records %llu in %llu markers: %zu iterations (%zu complete, %zu with lost records)\n",
                (unsigned long long)loop.marker_records, (unsigned long long)loop.markers, loop.iterations.size(),
                loop.iterations.size() - lost, lost);
  out += line;
  long typical = loop.typical();
  if (typical < 0) return out + "no complete iteration\n";
  out += "iteration  events   duration (us)\n";
  for (size_t i = 0; i < loop.iterations.size(); ++i) {
    const LoopIteration& it = loop.iterations[i];
    double us = cpu_hz ? double(it.end_tsc >= it.begin_tsc ? it.end_tsc - it.begin_tsc : 0) * 1e6 / double(cpu_hz) : 0;
    std::snprintf(line, sizeof line, "  #%-7zu %7zu %14.1f%s%s\n", i, it.events.size(), us,
                  long(i) == typical ? "  typical" : "", it.lost ? "  lost records" : "");
    out += line;
  }
  std::snprintf(line, sizeof line, "%-36s  %8s %10s %8s %8s\n", "per iteration", "typical", "average", "min", "max");
  out += line;
  for (const LoopFigure& f : loop_figures(loop)) {
    std::snprintf(line, sizeof line, "  %-34s  %8llu %10.1f %8llu %8llu\n", f.name.c_str(),
                  (unsigned long long)f.typical, f.average, (unsigned long long)f.min, (unsigned long long)f.max);
    out += line;
  }
  std::snprintf(line, sizeof line, "ordered events of the typical iteration (#%ld), runs folded:\n", typical);
  out += line;
  for (const std::string& l : folded_sequence(loop.iterations[size_t(typical)], cpu_hz)) out += l + "\n";
  return out;
}

}  // namespace trace
