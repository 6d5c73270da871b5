#include "trace/analyze/record_order.h"

#include <map>

#include "trace/format/events.h"
#include "trace/format/framing.h"

namespace trace {
namespace {

struct CpuCursor {
  std::vector<size_t> records;
  size_t next = 0;
  uint64_t order_tsc = 0;
  bool pending_lost_end = false;

  bool done() const { return next >= records.size() && !pending_lost_end; }
};

bool is_lost_marker(const ParsedRecord& r) {
  return r.event == events::kLostRecords && r.extra_count == LostRecords::kExtraWords && r.has_tsc;
}

// A CPU's order TSC only moves when its next record carries a TSC.
void load_head(const TraceFile& file, CpuCursor& cpu) {
  if (cpu.next >= cpu.records.size()) return;
  const ParsedRecord& r = file.records[cpu.records[cpu.next]];
  if (!r.has_tsc) return;
  cpu.order_tsc = is_lost_marker(r) ? LostRecords::from_extra(r.extra).first_tsc : r.tsc;
}

}  // namespace

std::vector<Step> order_records(const TraceFile& file) {
  std::map<uint32_t, CpuCursor> cpus;
  for (size_t i = 0; i < file.records.size(); ++i) cpus[file.records[i].cpu].records.push_back(i);
  for (auto& [id, cpu] : cpus) load_head(file, cpu);

  std::vector<Step> steps;
  steps.reserve(file.records.size() + 16);
  CpuCursor* last = nullptr;
  for (;;) {
    CpuCursor* pick = nullptr;
    for (auto& [id, cpu] : cpus) {
      if (cpu.done()) continue;
      // Ties go to the CPU processed last, as in xenalyze's default ordering.
      if (!pick || cpu.order_tsc < pick->order_tsc || (cpu.order_tsc == pick->order_tsc && &cpu == last)) pick = &cpu;
    }
    if (!pick) break;
    last = pick;
    if (pick->pending_lost_end) {
      steps.push_back({pick->records[pick->next], true, pick->order_tsc});
      pick->pending_lost_end = false;
      pick->next++;
      load_head(file, *pick);
      continue;
    }
    size_t index = pick->records[pick->next];
    steps.push_back({index, false, pick->order_tsc});
    const ParsedRecord& r = file.records[index];
    if (is_lost_marker(r)) {
      pick->pending_lost_end = true;
      if (r.tsc > pick->order_tsc) pick->order_tsc = r.tsc;
      continue;
    }
    pick->next++;
    load_head(file, *pick);
  }
  return steps;
}

}  // namespace trace
